// The arithmetic of VP9's motion compensation, at any depth, as FFmpeg 5.1's vp9dsp_template.c has
// it: FILTER_8TAP and FILTER_BILIN with av_clip_pixel, which do_8tap_1d_c, do_8tap_2d_c,
// do_bilin_1d_c, do_bilin_2d_c, do_scaled_8tap_c and do_scaled_bilin_c apply (CPU reference:
// src/kernels/mc.rs). Shared by the per-call kernel (mc.comp) and the frame path's inter
// prediction (vp9_mc.glsl), so that both compute the same; each fetches its own pixels and taps.
// Taps and pixels travel as vectors of 4, not arrays (see shift_in).

// av_clip_pixel (MC_PIXEL_MAX: the includer's pixel maximum, 255 unless it says otherwise).
#ifndef MC_PIXEL_MAX
#define MC_PIXEL_MAX 255
#endif
int clip_pixel(int x) { return clamp(x, 0, MC_PIXEL_MAX); }

// The 8 taps of a filter phase: a = taps 0 .. 3, b = taps 4 .. 7.
struct Taps {
    ivec4 a;
    ivec4 b;
};

// Taps from two words of 4 bytes each, each tap plus 32 (the full-pel tap is 128).
Taps unpack_taps(uint lo, uint hi)
{
    uvec4 shift = uvec4(0u, 8u, 16u, 24u);
    Taps t;
    t.a = ivec4((uvec4(lo) >> shift) & 255u) - 32;
    t.b = ivec4((uvec4(hi) >> shift) & 255u) - 32;
    return t;
}

// The 8 pixels (a, b) of a pass with `pixel` shifted in after them, the first dropping out:
// eight calls, pixel -3 first, gather them in a loop that indexes no array or vector. Mesa
// unrolls whole a loop that does, and the scaled path's loops, nested in the loop over a
// tile's rows, then took lavapipe's compile of vp9_inter from about 20 s to over 2 minutes.
void shift_in(inout ivec4 a, inout ivec4 b, int pixel)
{
    a = ivec4(a.yzw, b.x);
    b = ivec4(b.yzw, pixel);
}

// FILTER_8TAP: the taps over the 8 pixels at -3 .. +4 along the pass (a: -3 .. 0, b: 1 .. 4),
// rounded, clipped.
int filter_8tap(Taps t, ivec4 a, ivec4 b)
{
    ivec4 s = t.a * a + t.b * b;
    return clip_pixel((64 + s.x + s.y + s.z + s.w) >> 7);
}

// FILTER_BILIN: from a towards b (the next pixel along the pass) by m sixteenths, rounded.
int filter_bilin(int a, int b, int m) { return a + ((m * (b - a) + 8) >> 4); }
