// A check of itx_1d.glsl at 10 and 12 bits (itx_high.glsl) against the CPU reference
// (tests/itx_high_gpu.rs, through daedalus::vp9::frame::testing): a workgroup per case computes
// one transform block's residual as FFmpeg's C does at those depths: the first pass over the
// coefficients' columns, each output stored as int32, the second over the intermediate's
// columns, rounded by the size's shift in 32 bits; or the DC shortcut.
//
// Case (binding 0, words): size_log2 | first 1-D kind << 2 | second << 4 | DC only << 6 (kinds:
// 0 DCT, 1 ADST, 2 WHT), then the n x n coefficients, row-major, at 1025 words a case. The
// residual goes to binding 1, n x n ints row-major at 1024 words a case.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 32, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Cases { int cases[]; };
layout(std430, set = 0, binding = 1) buffer Out { int residual[]; };

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

#define ITX_HIGH
#include "itx_1d.glsl"

const uint CASE_WORDS = 1025u;
const uint OUT_WORDS = 1024u;

// The intermediate: row c is column c's first pass.
shared int mid[32 * 33];

// One 1-D transform of kind `kind` over `n` values, each stored as an int32.
void one_d(uint kind, int n, bool first_pass, inout int col[32])
{
    if (kind == 2u) {
        int o[4];
        iwht4(int[4](col[0], col[1], col[2], col[3]), first_pass, o);
        for (int k = 0; k < 4; k++)
            col[k] = o[k];
        return;
    }
    DCT i[32], o[32];
    for (int k = 0; k < 32; k++)
        i[k] = dct_of(k < n ? col[k] : 0);
    if (n == 4) {
        DCT o4[4];
        if (kind == 0u)
            idct4(DCT[4](i[0], i[1], i[2], i[3]), o4);
        else
            iadst4(DCT[4](i[0], i[1], i[2], i[3]), o4);
        for (int k = 0; k < 4; k++)
            o[k] = o4[k];
    } else if (n == 8) {
        DCT i8[8], o8[8];
        for (int k = 0; k < 8; k++)
            i8[k] = i[k];
        if (kind == 0u)
            idct8(i8, o8);
        else
            iadst8(i8, o8);
        for (int k = 0; k < 8; k++)
            o[k] = o8[k];
    } else if (n == 16) {
        DCT i16[16], o16[16];
        for (int k = 0; k < 16; k++)
            i16[k] = i[k];
        if (kind == 0u)
            idct16(i16, o16);
        else
            iadst16(i16, o16);
        for (int k = 0; k < 16; k++)
            o[k] = o16[k];
    } else {
        idct32(i, o);
    }
    for (int k = 0; k < n; k++)
        col[k] = dct_store(o[k]);
}

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
    uint c = pc.first_job + gl_WorkGroupID.x;
    uint at = c * CASE_WORDS, out_at = c * OUT_WORDS;
    int lane = int(gl_LocalInvocationID.x);
    uint head = uint(cases[at]);
    int n = 4 << (head & 3u);
    uint first = (head >> 2) & 3u, second = (head >> 4) & 3u;
    int shift = first == 2u ? 0 : (n == 4 ? 4 : (n == 8 ? 5 : 6));
    if ((head & 64u) != 0u) {
        int t = dct_store(r14(r14(dct_of(cases[at + 1u]) * 11585) * 11585));
        int r = shift == 0 ? t : (t + (1 << (shift - 1))) >> shift;
        for (int i = lane; i < n * n; i += 32)
            residual[out_at + uint(i)] = r;
        return;
    }
    int col[32];
    if (lane < n) {
        for (int k = 0; k < n; k++)
            col[k] = cases[at + 1u + uint(k * n + lane)];
        one_d(first, n, true, col);
        for (int k = 0; k < n; k++)
            mid[lane * 33 + k] = col[k];
    }
    barrier();
    if (lane < n) {
        for (int k = 0; k < n; k++)
            col[k] = mid[k * 33 + lane];
        one_d(second, n, false, col);
        for (int k = 0; k < n; k++) {
            int x = col[k];
            residual[out_at + uint(k * n + lane)] =
                shift == 0 ? x : (x + (1 << (shift - 1))) >> shift;
        }
    }
}
