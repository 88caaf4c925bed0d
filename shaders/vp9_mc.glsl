// Inter prediction of the frame path (vp9_inter.comp): FFmpeg 5.1's VP9 motion compensation,
// at the frame's depth (vp9_frame.glsl), for one prediction unit at a time. A reference is read clamped to its visible size,
// which equals FFmpeg's emulated edges (vp9recon.c switches to them wherever a block and its
// taps would read outside that size). Unscaled units mirror mc_luma_unscaled and
// mc_chroma_unscaled with the 8-tap and bilinear functions of vp9dsp_template.c (2-D: a
// horizontal pass clipped to 8 bits, then a vertical one); scaled references mirror
// mc_luma_scaled and mc_chroma_scaled (the vector clamped and scaled apart from the position)
// with do_scaled_8tap_c and do_scaled_bilin_c, where the includer defines VP9_SCALED; their
// arithmetic is mc_filter.glsl's, which the per-call kernel (mc.comp) shares. Needs
// vp9_frame.glsl.

#define MC_PIXEL_MAX pixel_max()
#include "mc_filter.glsl"

const uint FILTER_BILINEAR = 3u;

// The 8-tap filter of the block (smooth, regular or sharp), 16 phases of 8 taps a byte each:
// loaded once per workgroup (load_taps), since a table indexed at run time becomes a private
// copy per invocation on some compilers.
shared uint mc_taps[32];

void load_taps(uint interp)
{
    for (uint i = gl_LocalInvocationID.x; i < 32u && interp < FILTER_BILINEAR; i += WORKGROUP)
        mc_taps[i] = data[H_TAPS + interp * 32u + i];
    barrier();
}

// The 8 taps of a phase.
Taps taps_of(uint phase) { return unpack_taps(mc_taps[phase * 2u], mc_taps[phase * 2u + 1u]); }

// Where a reference plane is: its binding, offset and stride in pixels, and visible size.
struct RefView {
    uint binding;
    uint offset;
    int stride;
    ivec2 size;
    // Q14 scale and step per direction; scale 0: the frame's own size.
    ivec2 scale;
    ivec2 step;
};

RefView ref_view(uint r, uint p)
{
    uint base = H_REF + 16u * r;
    RefView v;
    v.binding = r;
    v.offset = data[base + 2u * p] >> PIXEL_SHIFT;
    v.stride = int(data[base + 2u * p + 1u] >> PIXEL_SHIFT);
    int w = int(data[base + REF_WIDTH]), h = int(data[base + REF_HEIGHT]);
    int sh = int(ss_h(p)), sv = int(ss_v(p));
    v.size = ivec2((w + sh) >> sh, (h + sv) >> sv);
    v.scale = ivec2(int(data[base + REF_SCALE]), int(data[base + REF_SCALE + 1u]));
    v.step = ivec2(int(data[base + REF_STEP]), int(data[base + REF_STEP + 1u]));
    return v;
}

// Whether a reference is of another size than the frame: never, unless the includer defines
// VP9_SCALED (the host runs that variant for the frames that have such a reference), and
// then the scaled path is code the compiler leaves out.
#ifdef VP9_SCALED
bool is_scaled(RefView v) { return v.scale.x != 0; }
#else
bool is_scaled(RefView v) { return false; }
#endif

// The reference's pixel nearest to (x, y) inside its visible size.
int ref_pixel(RefView v, int x, int y)
{
    x = clamp(x, 0, v.size.x - 1);
    y = clamp(y, 0, v.size.y - 1);
    uint at = v.offset + uint(y * v.stride + x);
    if (v.binding == 0u)
        return int(uint(ref0[at]));
    if (v.binding == 1u)
        return int(uint(ref1[at]));
    return int(uint(ref2[at]));
}

// Horizontal 8-tap filter of row y at column x (reads x - 3 .. x + 4), clipped.
int tap8_row(RefView v, int x, int y, uint phase)
{
    ivec4 a = ivec4(0), b = ivec4(0);
    for (int k = 0; k < 8; k++)
        shift_in(a, b, ref_pixel(v, x + k - 3, y));
    return filter_8tap(taps_of(phase), a, b);
}

// The reference window of an unscaled unit: columns -3 .. w + 4 and rows -3 .. h + 4 around
// its source position, read clamped once into shared memory, WORD_PIXELS pixels a word, up to
// 76 pixels a row (units are at most 64 x 64, and a row starts on the reference's word that
// holds its column -3); the filters read it there.
const int WINDOW_WORDS = 76 / WORD_PIXELS;
shared uint mc_window[71 * WINDOW_WORDS];
// The pixels of a window row's first word before its column -3 (the same in every row).
int window_shift = 0;

// Word `w` of row `row` of a window at `origin` of reference `v`, read clamped a pixel at a
// time (near its edges).
uint window_word_clamped(RefView v, ivec2 origin, int row, int w)
{
    uint word = 0u;
    for (int k = 0; k < WORD_PIXELS; k++)
        word |= uint(ref_pixel(v, origin.x + w * WORD_PIXELS + k, origin.y + row))
                << (PIXEL_BITS * k);
    return word;
}

#define WORD_MASK uint(WORD_PIXELS - 1)

void load_window(RefView v, ivec2 src, ivec2 size)
{
    ivec2 origin = src - 3;
    // Where the reference's rows start on a word, a window row starts on the word that holds
    // its column -3, and its words are the reference's own: a load each.
    bool rows_on_words = v.stride > 0 && ((v.offset | uint(v.stride)) & WORD_MASK) == 0u;
    int shift = rows_on_words ? origin.x & int(WORD_MASK) : 0;
    ivec2 start = ivec2(origin.x - shift, origin.y);
    int words = (shift + size.x + 7 + WORD_PIXELS - 1) >> WORD_PIXELS_LOG2, rows = size.y + 7;
    // Wholly inside the reference (most are): words read as they are, from one binding
    // chosen once (a choice per pixel costs every binding's load on some compilers).
    bool inside = rows_on_words && start.x >= 0 && start.y >= 0 &&
                  start.x + WORD_PIXELS * words <= v.size.x && start.y + rows <= v.size.y;
    uint first = (v.offset + uint(start.y * v.stride + start.x)) >> WORD_PIXELS_LOG2;
    uint row_words = uint(v.stride) >> WORD_PIXELS_LOG2;
    int i = int(gl_LocalInvocationID.x);
    // (i / words by a multiply: a device without integer division, V3D's and lavapipe's
    // x86 alike, runs a division a lane as a long sequence.)
    uint per = (1u << 20) / uint(words) + 1u;
    if (inside && v.binding == 0u) {
        for (; i < words * rows; i += WORKGROUP) {
            int row = int((uint(i) * per) >> 20), w = i - row * words;
            mc_window[row * WINDOW_WORDS + w] = ref0_words[first + uint(row) * row_words + uint(w)];
        }
    } else if (inside && v.binding == 1u) {
        for (; i < words * rows; i += WORKGROUP) {
            int row = int((uint(i) * per) >> 20), w = i - row * words;
            mc_window[row * WINDOW_WORDS + w] = ref1_words[first + uint(row) * row_words + uint(w)];
        }
    } else if (inside) {
        for (; i < words * rows; i += WORKGROUP) {
            int row = int((uint(i) * per) >> 20), w = i - row * words;
            mc_window[row * WINDOW_WORDS + w] = ref2_words[first + uint(row) * row_words + uint(w)];
        }
    } else {
        for (; i < words * rows; i += WORKGROUP) {
            int row = int((uint(i) * per) >> 20), w = i - row * words;
            mc_window[row * WINDOW_WORDS + w] = window_word_clamped(v, start, row, w);
        }
    }
    window_shift = shift;
    barrier();
}

// The 4 bytes from byte `s` (0 to 3) of word `lo`, the next word `hi` after it.
uint bytes_from(uint lo, uint hi, uint s)
{
    return s == 0u ? lo : (lo >> (8u * s)) | (hi << (32u - 8u * s));
}

ivec4 unpack_pixels(uint w)
{
    return ivec4(int(w & 255u), int((w >> 8) & 255u), int((w >> 16) & 255u), int(w >> 24));
}

// Pixels x - 3 .. x + 4 of window row y (a: -3 .. 0, b: 1 .. 4): at 8 bits from the three
// words that hold them, a load per word, not per pixel.
void window_row8(int x, int y, out ivec4 a, out ivec4 b)
{
    x += window_shift;
    int at = (y + 3) * WINDOW_WORDS + (x >> WORD_PIXELS_LOG2);
#ifdef VP9_HIGH
    uint s = uint(x & 1);
    uint w[5] = uint[5](mc_window[at], mc_window[at + 1], mc_window[at + 2], mc_window[at + 3],
                        mc_window[at + 4]);
    uvec4 lo = uvec4(w[0], w[1], w[1], w[2]), hi = uvec4(w[2], w[3], w[3], w[4]);
    // pixel k of the 8 is pixel (s + k) & 1 of word (s + k) >> 1
    a = s == 0u ? ivec4(lo.x & 0xffffu, lo.x >> 16, lo.z & 0xffffu, lo.z >> 16)
                : ivec4(lo.x >> 16, lo.y & 0xffffu, lo.z >> 16, lo.w & 0xffffu);
    b = s == 0u ? ivec4(hi.x & 0xffffu, hi.x >> 16, hi.z & 0xffffu, hi.z >> 16)
                : ivec4(hi.x >> 16, hi.y & 0xffffu, hi.z >> 16, hi.w & 0xffffu);
#else
    uint s = uint(x & 3);
    uint w0 = mc_window[at], w1 = mc_window[at + 1], w2 = mc_window[at + 2];
    a = unpack_pixels(bytes_from(w0, w1, s));
    b = unpack_pixels(bytes_from(w1, w2, s));
#endif
}

// Pixel (x, y) of the plane from a prediction: put, or averaged into what is there (`avg`:
// the second prediction of a compound block); inside the decoded size only.
void put_pixel(Plane plane, int x, int y, bool avg, int value)
{
    if (x < plane.size.x && y < plane.size.y) {
        uint a = plane.offset + uint(y * plane.stride + x);
        if (avg)
            value = (int(uint(cur[a])) + value + 1) >> 1;
        cur[a] = PIXEL(value);
    }
}

// Column x of an unscaled unit of `h` rows at `at` from its window, at phases (mx, my) in
// 1/16 pel with their taps: FFmpeg's put (or avg) function of the unit's filter, down the
// whole column. Each source row is filtered across once and slides into the last 8 (a, b),
// from which the next row down is filtered; so a column of h rows filters h + 7 rows across,
// where tiles of 8 rows filtered 15 for every 8.
void predict_column(Plane plane, ivec2 at, int x, int h, ivec2 phase, Taps htaps, Taps vtaps,
                    uint interp, bool avg)
{
    int mx = phase.x, my = phase.y;
    bool eight = my != 0 && interp != FILTER_BILINEAR;
    // The rows across before the column's first output: 7 (8-tap), 1 (bilinear), 0.
    int lead = my == 0 ? 0 : (eight ? 7 : 1);
    ivec4 a = ivec4(0), b = ivec4(0);
    for (int i = 0; i < h + lead; i++) {
        // One read of the row's pixels for whichever filter (a device that runs every side
        // of a branch masked would otherwise read them three times).
        ivec4 pa, pb;
        window_row8(x, i - (eight ? 3 : 0), pa, pb);
        int across;
        if (mx == 0)
            across = pa.w;
        else if (interp == FILTER_BILINEAR)
            across = filter_bilin(pa.w, pb.x, mx);
        else
            across = filter_8tap(htaps, pa, pb);
        shift_in(a, b, across);
        if (i < lead)
            continue;
        int value;
        if (my == 0)
            value = across;
        else if (interp == FILTER_BILINEAR)
            value = filter_bilin(b.z, b.w, my);
        else
            value = filter_8tap(vtaps, a, b);
        put_pixel(plane, at.x + x, at.y + i - lead, avg, value);
    }
}

// FFmpeg's scale_mv: (n * scale) >> 14 of the 64-bit product.
int scale_mv(int n, int scale)
{
    int msb, lsb;
    imulExtended(n, scale, msb, lsb);
    return (msb << 18) | int(uint(lsb) >> 14);
}

// av_clip, whose bounds may cross (then the upper one wins, as in C).
int clip_c(int a, int lo, int hi) { return a < lo ? lo : (a > hi ? hi : a); }

// A scaled unit's source position in 1/16 pel (mc_luma_scaled, mc_chroma_scaled): the vector
// clamped against the frame, then vector and position scaled apart. `at` is the unit's
// top-left pixel in the plane, `sub` and `span` the px, py and pw, ph of FFmpeg's call.
ivec2 scaled_position(RefView v, uint p, ivec2 at, ivec2 mv, ivec2 sub, ivec2 span)
{
    ivec2 m;
    ivec2 frame = ivec2(int(header(H_COLS)), int(header(H_ROWS)));
    bvec2 halved = bvec2(ss_h(p) != 0u, ss_v(p) != 0u);
    for (int d = 0; d < 2; d++) {
        int pos = at[d];
        if (halved[d]) {
            // libvpx's bug (webm issue 820), kept: chroma clamped and scaled in 1/16 pel.
            int c = clip_c(mv[d], -(pos + span[d] - sub[d] + 4) * 16,
                           (frame[d] * 4 - pos + sub[d] + 3) * 16);
            m[d] = scale_mv(c, v.scale[d]) + (scale_mv(pos * 16, v.scale[d]) & ~15) +
                   (scale_mv(pos * 32, v.scale[d]) & 15);
        } else {
            int c = clip_c(mv[d], -(pos + span[d] - sub[d] + 4) * 8,
                           (frame[d] * 8 - pos + sub[d] + 3) * 8);
            m[d] = scale_mv(c * 2, v.scale[d]) + scale_mv(pos * 16, v.scale[d]);
        }
    }
    return m;
}

// Horizontally filtered source row `y` at scaled column x of a scaled unit starting at
// source column x0 with phase mx (do_scaled_8tap_c's first pass, or the bilinear one).
int scaled_row(RefView v, int x0, int mx, int x, int y, uint interp)
{
    int pos = mx + x * v.step.x;
    int col = x0 + (pos >> 4), phase = pos & 15;
    if (interp == FILTER_BILINEAR)
        return filter_bilin(ref_pixel(v, col, y), ref_pixel(v, col + 1, y), phase);
    return tap8_row(v, col, y, uint(phase));
}

// Pixel (x, y) of a scaled unit whose source position is `m` (1/16 pel).
int predict_scaled(RefView v, ivec2 m, uint interp, int x, int y)
{
    int x0 = m.x >> 4, y0 = m.y >> 4;
    int pos = (m.y & 15) + y * v.step.y;
    int row = y0 + (pos >> 4), phase = pos & 15;
    if (interp == FILTER_BILINEAR) {
        int a = scaled_row(v, x0, m.x & 15, x, row, interp);
        int b = scaled_row(v, x0, m.x & 15, x, row + 1, interp);
        return filter_bilin(a, b, phase);
    }
    ivec4 lo = ivec4(0), hi = ivec4(0);
    for (int k = 0; k < 8; k++)
        shift_in(lo, hi, scaled_row(v, x0, m.x & 15, x, row + k - 3, interp));
    return filter_8tap(taps_of(uint(phase)), lo, hi);
}

// FFmpeg's ROUNDED_DIV of a vector sum by 2 or 4 (halves away from zero).
int rounded_div(int a, int b) { return a >= 0 ? (a + (b >> 1)) / b : -((-a + (b >> 1)) / b); }

ivec2 mv_average(ivec2 a, ivec2 b)
{
    return ivec2(rounded_div(a.x + b.x, 2), rounded_div(a.y + b.y, 2));
}


// One prediction unit: `at`, `size` in plane pixels, its vectors for both references, and
// FFmpeg's px, py, pw, ph for the scaled path.
struct Unit {
    ivec2 at;
    ivec2 size;
    ivec2 mv[2];
    ivec2 sub;
    ivec2 span;
};

// Predicts a unit of plane `p` from the block's reference(s) into the frame: the first put,
// the second averaged in, as FFmpeg's put and avg functions do; an unscaled unit's columns
// spread over the workgroup (a scaled one's tiles of a column's 8 rows), an invocation the
// same ones for both (it reads back only what it wrote). Uniform across the workgroup.
void predict_unit(Block b, uint p, Unit u)
{
    bool comp = (b.flags & BLOCK_COMP) != 0u;
    Plane plane = plane_of(p);
    for (uint r = 0u; r < (comp ? 2u : 1u); r++) {
        RefView v = ref_view(r == 0u ? b.ref_a : b.ref_b, p);
        bool scaled = is_scaled(v);
        bool avg = r != 0u;
        if (!scaled) {
            // the vector in 1/16 pel of the plane (1/8 luma pel, halved where subsampled)
            ivec2 m16 = ivec2(u.mv[r].x << (1u - ss_h(p)), u.mv[r].y << (1u - ss_v(p)));
            ivec2 phase = m16 & 15;
            load_window(v, u.at + (m16 >> 4), u.size);
            Taps htaps = taps_of(uint(phase.x)), vtaps = taps_of(uint(phase.y));
            for (int x = int(gl_LocalInvocationID.x); x < u.size.x; x += WORKGROUP)
                predict_column(plane, u.at, x, u.size.y, phase, htaps, vtaps, b.interp, avg);
        } else {
            ivec2 m = scaled_position(v, p, u.at, u.mv[r], u.sub, u.span);
            int tiles = u.size.x * ((u.size.y + 7) >> 3);
            for (int t = int(gl_LocalInvocationID.x); t < tiles; t += WORKGROUP) {
                int x = t & (u.size.x - 1), r0 = (t >> findLSB(u.size.x)) * 8;
                for (int i = 0; i < 8; i++)
                    if (r0 + i < u.size.y)
                        put_pixel(plane, u.at.x + x, u.at.y + r0 + i, avg,
                                  predict_scaled(v, m, b.interp, x, r0 + i));
            }
        }
        // The window read before it is replaced.
        barrier();
    }
}

Unit make_unit(ivec2 at, ivec2 size, ivec2 mv0, ivec2 mv1, ivec2 sub, ivec2 span)
{
    Unit u;
    u.at = at;
    u.size = size;
    u.mv[0] = mv0;
    u.mv[1] = mv1;
    u.sub = sub;
    u.span = span;
    return u;
}

// The chroma vector of reference r for unit `which` of a block under 8x8, from its 4x4
// vectors (FFmpeg's averages; see inter_pred's 4x4 branch).
ivec2 sub8x8_chroma_mv(Block b, uint r, uint sh, uint sv, uint which)
{
    if (sh != 0u && sv != 0u) {
        ivec2 s = block_mv(b, 0u, r) + block_mv(b, 1u, r) + block_mv(b, 2u, r) +
                  block_mv(b, 3u, r);
        return ivec2(rounded_div(s.x, 4), rounded_div(s.y, 4));
    }
    if (sv != 0u) // 4:4:0: left avg(0, 2), right avg(1, 3)
        return mv_average(block_mv(b, which, r), block_mv(b, which + 2u, r));
    if (sh != 0u) // 4:2:2: top avg(0, 1), bottom avg(1, 2) (libvpx's bug, webm issue 993)
        return mv_average(block_mv(b, which, r), block_mv(b, which + 1u, r));
    return block_mv(b, which, r);
}

// The whole prediction of an inter block, every plane (FFmpeg's inter_pred). A block under
// 8x8 is predicted per 4x4 as the scaled template does (the unscaled one's 8x4 and 4x8 calls
// give the same pixels, their vectors being equal).
void predict_block(Block b)
{
    load_taps(b.interp);
    ivec2 cell = ivec2(b.col, b.row);
    for (uint p = 0u; p < 3u; p++) {
        uint sh = ss_h(p), sv = ss_v(p);
        if (b.bs > BS_8X8) {
            uint count = p == 0u ? 4u : (sh + sv == 2u ? 1u : (sh + sv == 1u ? 2u : 4u));
            for (uint k = 0u; k < count; k++) {
                // luma and 4:4:4: 4x4 k; 4:4:0: left, right; 4:2:2: top, bottom
                uvec2 q = p == 0u || sh + sv == 0u ? uvec2(k & 1u, k >> 1)
                                                   : (sv != 0u ? uvec2(k, 0u) : uvec2(0u, k));
                ivec2 at = ivec2(cell * 8) >> ivec2(sh, sv);
                at += ivec2(q * 4u);
                ivec2 span = ivec2(8 >> sh, 8 >> sv);
                ivec2 mv[2];
                for (uint r = 0u; r < 2u; r++)
                    mv[r] = p == 0u ? block_mv(b, k, r) : sub8x8_chroma_mv(b, r, sh, sv, k);
                predict_unit(b, p, make_unit(at, ivec2(4), mv[0], mv[1], ivec2(q * 4u), span));
            }
        } else {
            // FFmpeg's ff_vp9_bwh_tab[ss][bs] * 4: 8x8 units where subsampled
            uvec2 wh = uvec2(sh != 0u ? bw8(b.bs).x : bw4(b.bs).x,
                             sv != 0u ? bw8(b.bs).y : bw4(b.bs).y) * 4u;
            ivec2 at = ivec2(cell * 8) >> ivec2(sh, sv);
            ivec2 size = ivec2(wh);
            predict_unit(b, p, make_unit(at, size, block_mv(b, 0u, 0u), block_mv(b, 0u, 1u),
                                         ivec2(0), size));
        }
    }
}
