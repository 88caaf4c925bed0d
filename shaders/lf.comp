// VP9 loop filters, 8-bit, every function of FFmpeg's tables (src/kernels/lf.rs). A job is 8
// lines across one edge with one filter width and one set of thresholds; invocation `line`
// filters line `line`, which reads and writes only its own pixels.
//
// Job (uvec4): x = byte offset in `px` of the first pixel after the edge on line 0, y = stride
// (signed), z = parameters (LfHalf::params: E, I, H, width, direction), w = unused.
#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_GOOGLE_include_directive : require
#include "jobs.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Jobs { uvec4 jobs[]; };
layout(std430, set = 0, binding = 2) buffer Pixels { uint8_t px[]; };

#include "lf_filter.glsl"

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

void main()
{
    uint job = gl_GlobalInvocationID.x / 8u;
    int line = int(gl_GlobalInvocationID.x % 8u);
    if (job >= pc.job_count)
        return;
    uvec4 jb = jobs[pc.first_job + job];
    if (jb.x == SKIP_JOB)
        return; // taken out of the batch again (src/batch/call.rs)
    uint p = jb.z;
    int E = int(p & 0x3ffu) - 1;
    int I = int((p >> 10) & 0x1ffu) - 1;
    int H = int((p >> 19) & 0x1ffu) - 1;
    int wd = ((p >> 28) & 3u) == 0u ? 4 : (((p >> 28) & 3u) == 1u ? 8 : 16);
    bool vertical_edge = ((p >> 30) & 1u) == 0u;
    int stride = int(jb.y);
    int along = vertical_edge ? stride : 1;
    int across = vertical_edge ? 1 : stride;
    uint edge = jb.x + uint(line * along);
    int reach = wd == 16 ? 8 : 4;
    int v[16];
    for (int k = 0; k < 16; k++)
        v[k] = k >= 8 - reach && k < 8 + reach ? int(px[edge + uint((k - 8) * across)]) : 0;
    ivec2 changed = filter_values(v, wd, E, I, H);
    for (int k = changed.x; k < changed.y; k++)
        px[edge + uint((k - 8) * across)] = uint8_t(v[k]);
}
