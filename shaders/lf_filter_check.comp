// A check of lf_filter.glsl at 8, 10 and 12 bits against the CPU reference (tests/mc_lf_gpu.rs,
// through daedalus::vp9::frame::testing): a workgroup per case filters one line across an edge.
// Case (binding 0, 20 words): the width (4, 8 or 16) | bit depth << 8, E, I, H, then the 16
// pixels from 8 before the edge; the filtered line goes to binding 1, 16 words a case.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Cases { int cases[]; };
layout(std430, set = 0, binding = 1) buffer Out { int filtered[]; };

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

// The case's depth (the same for the whole workgroup).
int case_bit_depth = 8;
#define LF_BIT_DEPTH case_bit_depth
#include "lf_filter.glsl"

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count || gl_LocalInvocationID.x != 0u)
        return;
    uint c = pc.first_job + gl_WorkGroupID.x;
    uint at = c * 20u;
    int head = cases[at];
    case_bit_depth = (head >> 8) & 15;
    int v[16];
    for (int k = 0; k < 16; k++)
        v[k] = cases[at + 4u + uint(k)];
    filter_values(v, head & 255, cases[at + 1u], cases[at + 2u], cases[at + 3u]);
    for (int k = 0; k < 16; k++)
        filtered[c * 16u + uint(k)] = v[k];
}
