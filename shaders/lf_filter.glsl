// The loop filter of one line across an edge, as FFmpeg 5.1's C `loop_filter`
// (src/kernels/lf.rs), at LF_BIT_DEPTH bits (8 unless the includer says otherwise: above 8 the
// thresholds and the flatness bound scale by 1 << (LF_BIT_DEPTH - 8), and the clips are the
// depth's). v[k] is the pixel at distance k - 8 from the edge (v[8] = q0); only
// v[8 - reach .. 8 + reach) are read (reach: 8 for the 16-wide filter, else 4). The filtered
// values replace them in v; returns the range [x, y) of entries that may have changed (empty
// where the filter mask leaves the line alone).
#ifndef LF_BIT_DEPTH
#define LF_BIT_DEPTH 8
#endif

ivec2 filter_values(inout int v[16], int wd, int E, int I, int H)
{
    int up = LF_BIT_DEPTH - 8, F = 1 << up;
    int half_range = 1 << (LF_BIT_DEPTH - 1), pixel_max = (1 << LF_BIT_DEPTH) - 1;
    E <<= up;
    I <<= up;
    H <<= up;
    int p3 = v[4], p2 = v[5], p1 = v[6], p0 = v[7];
    int q0 = v[8], q1 = v[9], q2 = v[10], q3 = v[11];
    bool fm = abs(p3 - p2) <= I && abs(p2 - p1) <= I && abs(p1 - p0) <= I &&
              abs(q1 - q0) <= I && abs(q2 - q1) <= I && abs(q3 - q2) <= I &&
              abs(p0 - q0) * 2 + (abs(p1 - q1) >> 1) <= E;
    if (!fm)
        return ivec2(0, 0);
    bool flat8out = wd >= 16 &&
        abs(v[0] - p0) <= F && abs(v[1] - p0) <= F && abs(v[2] - p0) <= F && abs(v[3] - p0) <= F &&
        abs(v[12] - q0) <= F && abs(v[13] - q0) <= F && abs(v[14] - q0) <= F && abs(v[15] - q0) <= F;
    bool flat8in = wd >= 8 &&
        abs(p3 - p0) <= F && abs(p2 - p0) <= F && abs(p1 - p0) <= F &&
        abs(q1 - q0) <= F && abs(q2 - q0) <= F && abs(q3 - q0) <= F;

    if (wd >= 16 && flat8out && flat8in) {
        // Output k averages the 15 taps centred on it, the centre doubled, the line extended
        // by repeating its end pixels; every output from the unfiltered line. The taps' sum
        // slides along: a pixel in, a pixel out.
        int o[16] = v;
        int sum = 7 * v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7] + v[8];
        for (int k = 1; k < 15; k++) {
            o[k] = (8 + v[k] + sum) >> 4;
            sum += v[min(k + 8, 15)] - v[max(k - 7, 0)];
        }
        v = o;
        return ivec2(1, 15);
    }
    if (wd >= 8 && flat8in) {
        int o[16] = v;
        int sum = 3 * v[4] + v[5] + v[6] + v[7] + v[8];
        for (int k = 5; k < 11; k++) {
            o[k] = (4 + v[k] + sum) >> 3;
            sum += v[min(k + 4, 11)] - v[max(k - 3, 4)];
        }
        v = o;
        return ivec2(5, 11);
    }
    bool hev = abs(p1 - p0) > H || abs(q1 - q0) > H;
    int lo = -half_range, hi = half_range - 1;
    int f = clamp(3 * (q0 - p0) + (hev ? clamp(p1 - q1, lo, hi) : 0), lo, hi);
    int f1 = min(f + 4, hi) >> 3;
    int f2 = min(f + 3, hi) >> 3;
    v[7] = clamp(p0 + f2, 0, pixel_max);
    v[8] = clamp(q0 - f1, 0, pixel_max);
    if (hev)
        return ivec2(7, 9);
    int g = (f1 + 1) >> 1;
    v[6] = clamp(p1 + g, 0, pixel_max);
    v[9] = clamp(q1 - g, 0, pixel_max);
    return ivec2(6, 10);
}
