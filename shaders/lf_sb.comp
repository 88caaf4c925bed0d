// VP9's loop filter of one plane of a superblock, 8-bit (src/kernels/lf_sb.rs): a job is
// the plane's columns pass then its rows pass, in one workgroup; jobs of one dispatch run
// side by side (`lf_sb_pass.glsl` walks the masks and filters the lines).
#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_GOOGLE_include_directive : require
#include "jobs.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Jobs { uvec4 jobs[]; };
layout(std430, set = 0, binding = 1) readonly buffer Coefs { int16_t coefs[]; };
// The frame's pixels twice, at one binding: the rows pass reads and writes them through
// `px_coherent` (see lf_sb_pass.glsl).
layout(std430, set = 0, binding = 2) buffer Pixels { uint8_t px[]; };
layout(std430, set = 0, binding = 2) coherent buffer CoherentPixels { uint8_t px_coherent[]; };
// The same again a word (4 pixels) at a time, for rows that start on a word.
layout(std430, set = 0, binding = 2) buffer PixelWords { uint px_words[]; };
layout(std430, set = 0, binding = 2) coherent buffer CoherentPixelWords { uint px_words_coherent[]; };

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

#include "lf_sb_pass.glsl"

void main()
{
    uint job = gl_WorkGroupID.x;
    if (job >= pc.job_count)
        return;
    uvec4 jb = jobs[pc.first_job + job];
    if (jb.x == SKIP_JOB)
        return; // taken out of the batch again (src/batch/call.rs)
    filter_plane(jb, int(gl_LocalInvocationID.x));
}
