// The frame path's inverse transforms (vp9_inter_residual.comp, vp9_intra.comp): the residual
// of up to WORKGROUP / N transform blocks of N x N at once, for the includer to add to the
// frame, with FFmpeg 5.1's arithmetic at the frame's depth (VP9_HIGH: 10 and 12 bits, its
// 64-bit dctint): the 1-D transforms of itx_1d.glsl (src/kernels/itx.rs line for line) in the
// 2-D order of itx_main.glsl, FFmpeg's DC shortcut for idct_idct with eob 1, and where
// FFmpeg's SIMD may differ from its C watched (at 8 bits the lanes it keeps in 16 bits, at 10
// and 12 itx_high_watch.glsl): where it may (damaged streams), the frame is reported
// (STATUS_OVERFLOW) for the host to redo it with FFmpeg's own functions. Needs vp9_frame.glsl
// and a workgroup of 32 or 64.

#ifdef VP9_HIGH
#define ITX_HIGH
#endif
// What a block that may differ from FFmpeg's SIMD does (a check kernel names its own).
#ifndef ITX_REPORT
#define ITX_REPORT() report(STATUS_OVERFLOW)
#endif
// Coefficient `i` of a block, where `coef` says (an includer whose coefficients are packed
// reads them its own way).
#ifndef ITX_COEF
#define ITX_COEF(i) coef_at(i)
#endif
#include "itx_1d.glsl"

#ifdef ITX_HIGH
// A 1-D output as FFmpeg stores it between the passes: an int32 dctcoef at these depths.
int stored(int x) { return x; }
// FFmpeg's DC shortcut, in its 64-bit dctint.
int dc_only_value(int dc) { return dct_store(r14(r14(dct_of(dc) * 11585) * 11585)); }
#else
// A 1-D output as FFmpeg stores it between the passes: an int16_t dctcoef at 8 bits.
int stored(int x) { return trunc16(x); }
int dc_only_value(int dc) { return r14(r14(dc * 11585) * 11585); }
#endif

// The 1-D kinds, from FFmpeg's tx type (DCT_DCT, DCT_ADST, ADST_DCT, ADST_ADST): the first
// pass runs over the coefficients' columns with bit 0, the second with bit 1.
const uint TX_DCT = 0u;
const uint TX_ADST = 1u;
const uint TX_WHT = 2u;

uint first_kind(uint tx_type) { return tx_type & 1u; }
uint second_kind(uint tx_type) { return (tx_type >> 1) & 1u; }

#ifdef ITX_HIGH
#include "itx_high_watch.glsl"
#endif

// The intermediate, then the residual, of each block: 64 / N blocks of N rows of N + 1 (the
// padding spreads the transposed accesses over memory banks; an includer that works on one
// block a round may define ITX_MID_WORDS 1056); each invocation's watched lanes.
#ifndef ITX_MID_WORDS
#define ITX_MID_WORDS 2112
#endif
shared int itx_mid[ITX_MID_WORDS];
// (An includer whose workgroup is specialized names its largest, ITX_LANES.)
#ifndef ITX_LANES
#define ITX_LANES WORKGROUP
#endif
shared int itx_lanes[ITX_LANES];

#define ITX_N 4
#define ITX_SHIFT 4
#define ITX_IDCT idct4
#define ITX_IADST iadst4
#define ITX_HAS_WHT
#define ITX_1D itx_1d_4
#define ITX_RESIDUAL itx_residual_4
#include "vp9_itx_size.glsl"
#undef ITX_N
#undef ITX_SHIFT
#undef ITX_IDCT
#undef ITX_IADST
#undef ITX_HAS_WHT
#undef ITX_1D
#undef ITX_RESIDUAL

#define ITX_N 8
#define ITX_SHIFT 5
#define ITX_IDCT idct8
#define ITX_IADST iadst8
#define ITX_1D itx_1d_8
#define ITX_RESIDUAL itx_residual_8
#include "vp9_itx_size.glsl"
#undef ITX_N
#undef ITX_SHIFT
#undef ITX_IDCT
#undef ITX_IADST
#undef ITX_1D
#undef ITX_RESIDUAL

#define ITX_N 16
#define ITX_SHIFT 6
#define ITX_IDCT idct16
#define ITX_IADST iadst16
#define ITX_1D itx_1d_16
#define ITX_RESIDUAL itx_residual_16
#include "vp9_itx_size.glsl"
#undef ITX_N
#undef ITX_SHIFT
#undef ITX_IDCT
#undef ITX_IADST
#undef ITX_1D
#undef ITX_RESIDUAL

#define ITX_N 32
#define ITX_SHIFT 6
#define ITX_IDCT idct32
#define ITX_1D itx_1d_32
#define ITX_RESIDUAL itx_residual_32
#include "vp9_itx_size.glsl"
#undef ITX_N
#undef ITX_SHIFT
#undef ITX_IDCT
#undef ITX_1D
#undef ITX_RESIDUAL

// The residuals of a round of transform blocks of size 4 << size_log2 (up to 64 / N of them,
// a slot each) into itx_mid, see ITX_RESIDUAL: a `live` slot's block has its coefficients from
// `coef`, its `eob` and FFmpeg's `tx_type` (or lossless: `wht`). Every invocation calls it.
void itx_residual(uint size_log2, bool live, uint coef, int eob, uint tx_type, bool wht)
{
    uint first = wht ? TX_WHT : first_kind(tx_type);
    uint second = wht ? TX_WHT : second_kind(tx_type);
    if (size_log2 == 0u)
        itx_residual_4(live, coef, eob, first, second);
    else if (size_log2 == 1u)
        itx_residual_8(live, coef, eob, first, second);
    else if (size_log2 == 2u)
        itx_residual_16(live, coef, eob, first, second);
    else
        itx_residual_32(live, coef, eob, first, second);
}

// Element (r, c) of slot `slot`'s residual of a round of N x N blocks.
int itx_residual_at(uint n, uint slot, uint r, uint c)
{
    return itx_mid[slot * n * (n + 1u) + r * (n + 1u) + c];
}
