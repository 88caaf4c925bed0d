// The frame path's transforms at 10 and 12 bits run alone (tests/itx_high_gpu.rs and
// benches/simd_agreement.rs, through daedalus::vp9::frame::testing): a workgroup per case runs
// vp9_itx.glsl's itx_residual on one transform block, as vp9_inter_residual_high does, and
// writes its residual and whether the watch of FFmpeg's SIMD (itx_high_watch.glsl) flagged it.
//
// Binding 0: a frame header whose H_BIT_DEPTH word gives the depth, then from word CASES the
// cases, CASE_WORDS each: size_log2 | FFmpeg's tx type << 2 | lossless (Walsh-Hadamard) << 4,
// the end-of-block position, then the n x n coefficients, row-major. Binding 1: per case the
// residual, n x n ints row-major, then the watch's flag (0 or 1), OUT_WORDS each.
#version 450
#extension GL_GOOGLE_include_directive : require

#define VP9_HIGH
#define WORKGROUP 32
layout(local_size_x = WORKGROUP, local_size_y = 1, local_size_z = 1) in;

// Room for one 32x32 block's residual.
#define ITX_MID_WORDS 1056
#include "vp9_frame.glsl"

layout(std430, set = 0, binding = 1) buffer Out { int out_words[]; };

const uint CASES = 32u;
const uint CASE_WORDS = 1026u;
const uint OUT_WORDS = 1025u;

// The case's first output word: the watch writes its flag after the residual.
uint case_out;
#define ITX_REPORT() out_words[case_out + 1024u] = 1
#include "vp9_itx.glsl"

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
    read_depth();
    uint c = pc.first_job + gl_WorkGroupID.x;
    uint at = CASES + c * CASE_WORDS;
    case_out = c * OUT_WORDS;
    uint head = data[at];
    uint size_log2 = head & 3u;
    uint n = 4u << size_log2;
    uint lane = gl_LocalInvocationID.x;
    // (One block: the first slot's invocations.)
    itx_residual(size_log2, lane < n, at + 2u, int(data[at + 1u]), (head >> 2) & 3u,
                 (head & 16u) != 0u);
    if (lane < n)
        for (uint r = 0u; r < n; r++)
            out_words[case_out + r * n + lane] = itx_residual_at(n, 0u, r, lane);
}
