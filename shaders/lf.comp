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
        return; // completed early on the CPU
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

    // v[k]: the pixel at distance k - 8 from the edge (v[8] = q0).
    int v[16];
    for (int k = 0; k < 16; k++)
        v[k] = 0;
    for (int k = 0; k < 16; k++)
        if (k >= 8 - reach && k < 8 + reach)
            v[k] = int(px[edge + uint((k - 8) * across)]);

    int p3 = v[4], p2 = v[5], p1 = v[6], p0 = v[7];
    int q0 = v[8], q1 = v[9], q2 = v[10], q3 = v[11];
    bool fm = abs(p3 - p2) <= I && abs(p2 - p1) <= I && abs(p1 - p0) <= I &&
              abs(q1 - q0) <= I && abs(q2 - q1) <= I && abs(q3 - q2) <= I &&
              abs(p0 - q0) * 2 + (abs(p1 - q1) >> 1) <= E;
    if (!fm)
        return;
    bool flat8out = wd >= 16 &&
        abs(v[0] - p0) <= 1 && abs(v[1] - p0) <= 1 && abs(v[2] - p0) <= 1 && abs(v[3] - p0) <= 1 &&
        abs(v[12] - q0) <= 1 && abs(v[13] - q0) <= 1 && abs(v[14] - q0) <= 1 && abs(v[15] - q0) <= 1;
    bool flat8in = wd >= 8 &&
        abs(p3 - p0) <= 1 && abs(p2 - p0) <= 1 && abs(p1 - p0) <= 1 &&
        abs(q1 - q0) <= 1 && abs(q2 - q0) <= 1 && abs(q3 - q0) <= 1;

    if (wd >= 16 && flat8out && flat8in) {
        // Output k averages the 15 taps centred on it, the centre doubled, the line extended
        // by repeating its end pixels.
        for (int k = 1; k < 15; k++) {
            int sum = 8 + v[k];
            for (int d = -7; d <= 7; d++)
                sum += v[clamp(k + d, 0, 15)];
            px[edge + uint((k - 8) * across)] = uint8_t(sum >> 4);
        }
    } else if (wd >= 8 && flat8in) {
        for (int k = 5; k < 11; k++) {
            int sum = 4 + v[k];
            for (int d = -3; d <= 3; d++)
                sum += v[clamp(k + d, 4, 11)];
            px[edge + uint((k - 8) * across)] = uint8_t(sum >> 3);
        }
    } else {
        bool hev = abs(p1 - p0) > H || abs(q1 - q0) > H;
        int f = clamp(3 * (q0 - p0) + (hev ? clamp(p1 - q1, -128, 127) : 0), -128, 127);
        int f1 = min(f + 4, 127) >> 3;
        int f2 = min(f + 3, 127) >> 3;
        px[edge - uint(across)] = uint8_t(clamp(p0 + f2, 0, 255));
        px[edge] = uint8_t(clamp(q0 - f1, 0, 255));
        if (!hev) {
            int g = (f1 + 1) >> 1;
            px[edge - uint(2 * across)] = uint8_t(clamp(p1 + g, 0, 255));
            px[edge + uint(across)] = uint8_t(clamp(q1 - g, 0, 255));
        }
    }
}
