// A check of vp9_ipred.glsl against the CPU reference (tests/frame_ipred.rs, through
// daedalus::vp9::frame::testing): a workgroup per case predicts an n x n block from the edges the
// case gives, at 8, 10 or 12 bits. Case (binding 0, words): the mode (converted) | size_log2 <<
// 8 | bit depth << 12, then the top-left, 64 top and 32 left pixels, a word each (98 words);
// the predicted block goes to binding 1, a 16-bit word a pixel, at 1024 pixels a case.
#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Cases { uint cases[]; };
layout(std430, set = 0, binding = 1) buffer Out { uint16_t predicted[]; };

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

#include "vp9_ipred.glsl"

// The edge line (vp9_ipred_fn.glsl): the left column bottom to top, the top-left, the top.
shared int ipred_line[97];

// The case's depth, the same for the whole workgroup.
int case_bit_depth = 8;

#define IPRED_LINE(k) ipred_line[k]
#define IPRED_BIT_DEPTH case_bit_depth
#define IPRED_FN predict_pixel
#define IPRED_DC_FN predict_dc
#include "vp9_ipred_fn.glsl"

const uint CASE_WORDS = 98u;

void main()
{
    uint c = pc.first_job + gl_WorkGroupID.x;
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
    uint inv = gl_LocalInvocationID.x;
    uint at = c * CASE_WORDS;
    uint head = cases[at];
    uint mode = head & 0xffu;
    int log2n = int((head >> 8) & 3u) + 2;
    case_bit_depth = int((head >> 12) & 15u);
    int n = 1 << log2n;
    // top-left and 64 top pixels from word 1, 32 left from word 66
    ipred_line[n + int(inv)] = int(cases[at + 1u + inv]);
    if (inv == 0u)
        ipred_line[n + 64] = int(cases[at + 65u]);
    if (int(inv) < n)
        ipred_line[n - 1 - int(inv)] = int(cases[at + 66u + inv]);
    barrier();
    int dc = predict_dc(mode, n, log2n);
    for (int i = int(inv); i < n * n; i += 64)
        predicted[c * 1024u + uint(i)] =
            uint16_t(predict_pixel(mode, n, log2n, i & (n - 1), i >> log2n, dc));
}
