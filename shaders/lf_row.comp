// VP9's loop filter of a run of superblock planes in the decoder's order, 8-bit: one
// workgroup walks the dispatch's jobs (a plane of the superblocks of a row, superblock after
// superblock) one after the other, each as lf_sb.comp filters a plane (`lf_sb_pass.glsl`).
// A plane reaches into the pixels of the one before, so barriers separate them: the row's
// chain runs inside one workgroup instead of as a level of dispatches per superblock, each a
// round trip through the queue.
#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_GOOGLE_include_directive : require
#include "jobs.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Jobs { uvec4 jobs[]; };
layout(std430, set = 0, binding = 1) readonly buffer Coefs { int16_t coefs[]; };
// Coherent: a pass reads what other invocations of the workgroup wrote in the pass before.
layout(std430, set = 0, binding = 2) coherent buffer Pixels { uint8_t px[]; };
layout(std430, set = 0, binding = 2) coherent buffer PixelWords { uint px_words[]; };
#define px_coherent px
#define px_words_coherent px_words

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

#include "lf_sb_pass.glsl"

void main()
{
    int line = int(gl_LocalInvocationID.x);
    for (uint j = 0u; j < pc.job_count; j++) {
        uvec4 jb = jobs[pc.first_job + j];
        if (jb.x == SKIP_JOB)
            continue; // completed early on the CPU (the same for the whole workgroup)
        filter_plane(jb, line); // returns with its writes visible to the workgroup
    }
}
