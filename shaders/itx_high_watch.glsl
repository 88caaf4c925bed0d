// Where FFmpeg's x86 transforms at 10 and 12 bits (libavcodec/x86/vp9itxfm_16bpp.asm, and
// vp9itxfm_template.asm's 16-bit lanes for 10-bit 4x4s) may differ from its C, which the GPU
// computes exactly: a watch over the values the C has, for vp9_itx_size.glsl, which reports
// the block's frame (STATUS_OVERFLOW) for FFmpeg to redo. Valid streams never come near it
// (their coefficients and stored values stay below 2^19 at 12 bits, 2^17 at 10). Debian's
// build runs these with and without `-flags bitexact`; without it also the 10-bit 4x4s and
// the Walsh-Hadamard transform in 16-bit lanes, so both are watched:
// - 8x8 to 32x32, and 4x4 at 12 bits: each multiply splits a 32-bit value at 14 bits and
//   packs the high part to 16 bits with saturation, exact while every multiplied value stays
//   within 2^29; a pass's largest gain from its inputs to such a value is under 21, so inputs
//   (coefficients, stored values) within 2^24 keep them exact (adds wrap as the C's stores
//   do). The rounded residual is packed to 16 bits and added to the pixel in 16 bits: it must
//   stay at most 32767 less the pixel maximum.
// - 10-bit 4x4s: coefficients, stored values and outputs in 16 bits (outputs to 32759), and
//   the first sums each 1-D pass forms (idct's in0 +- in2, iadst's in0 - in2 + in3).
// - The Walsh-Hadamard transform (lossless): 16-bit lanes, its first pass's inputs shifted by
//   2; per 1-D pass the sum in0 - in1 + in2 + in3 the SIMD halves, and the output within 16
//   bits less the pixel maximum.
// - The DC shortcut: a 32-bit product of the coefficient by 11585 at 10 bits and for 12-bit
//   4x4s (16 bits for the 10-bit 4x4s), the residual in 16 bits for 12-bit 8x8 and up.
// Checked on 47 million blocks against FFmpeg's own C and SIMD functions: every block where
// the two differ is flagged, and no block of a valid stream's ranges.

// 1 where the invocation's block may differ (`lanes`, as at 8 bits).
int lanes = 0;

bool lanes_overflowed(int l) { return l != 0; }

void flag_if(bool b)
{
    if (b)
        lanes = 1;
}

bool outside16(int x) { return x < -32768 || x > 32767; }

// An n x n block in FFmpeg's 16-bit lanes (the 10-bit 4x4s).
bool in_lanes16(int n) { return n == 4 && bit_depth() == 10; }

// An input of a 1-D pass: a coefficient (first pass) or a stored value.
void watch_input(int n, bool wht, bool first_pass, int x)
{
    if (wht)
        flag_if(first_pass && (outside16(x >> 2) || (bit_depth() == 10 && outside16(x))));
    else if (in_lanes16(n))
        flag_if(outside16(x));
    else
        flag_if((x ^ (x >> 31)) >= (1 << 24));
}

// The sums a 4-input 1-D pass of kind `kind` (0: DCT, 1: ADST) forms first from its inputs.
void watch_sums(int n, uint kind, bool wht, bool first_pass, int i0, int i1, int i2, int i3)
{
    if (wht) {
        int s = first_pass ? 2 : 0;
        ivec4 i = ivec4(i0, i1, i2, i3) >> s;
        // (Terms this large already fail; the sum of smaller ones cannot wrap.)
        bvec4 huge = greaterThanEqual(abs(i), ivec4(1 << 28));
        flag_if(any(huge) || outside16(i.x - i.y + i.z + i.w));
    } else if (in_lanes16(n)) {
        // (The inputs are watched to 16 bits: no sum wraps.)
        flag_if(kind == 0u ? abs(i0) + abs(i2) > 32767 : outside16(i0 - i2 + i3));
    }
}

// A second-pass output `x` and the residual `v` it rounds to.
void watch_output(int n, bool wht, int x, int v)
{
    if (wht)
        flag_if(x < -32768 || x > 32767 - pixel_max());
    else if (in_lanes16(n))
        flag_if(outside16(x) || x > 32759);
    else
        flag_if(v > 32767 - pixel_max());
}

// The DC shortcut's coefficient `c0` and residual `v`.
void watch_dc_only(int n, int c0, int v)
{
    if (in_lanes16(n))
        flag_if(outside16(c0));
    else if (bit_depth() == 10 || n == 4)
        flag_if(c0 < -185368 || c0 > 185366);
    else
        flag_if(v < -32768 || v > 32767 - pixel_max());
}
