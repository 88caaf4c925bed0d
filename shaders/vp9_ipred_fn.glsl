// The predictors of vp9_ipred.glsl, per pixel, over an edge line the includer keeps (included
// once per place it is kept): IPRED_LINE(k) is the line from bottom-left to top-right, FFmpeg's
// left[0 .. n) (the pixel left of row n - 1 - k), the top-left (k = n), then top[0 ..)
// (k = n + 1 + i: up to 8 for a 4x4, whose diagonal modes read the top-right); IPRED_FN names
// the predictor, IPRED_DC_FN the DC modes' value, which the caller computes once per block.
// IPRED_BIT_DEPTH (8 unless the includer says otherwise) sets TM's clip and the values of
// DC_127/128/129, the only ones that depend on the depth.
//
// Every mode's pixel is one formula over three pixels of the line, (a + 2 b + c + 2) >> 2 (a
// copy: a = b = c; FFmpeg's avg2: `halved`), but TM's and the DC modes': a mode only picks
// the three places. So a pixel costs three loads whatever the mode, on a device that runs every
// mode's side of a divergent branch (lavapipe, a QPU's lanes): written as FFmpeg's functions
// are, a mode each with its own loads, every pixel paid for all of them.

#ifndef IPRED_BIT_DEPTH
#define IPRED_BIT_DEPTH 8
#endif

// The value of an n x n block of a DC mode (converted): the rounded mean of its edges (0 for
// other modes).
int IPRED_DC_FN(uint mode, int n, int log2n)
{
    if (mode != DC_PRED && mode != LEFT_DC_PRED && mode != TOP_DC_PRED)
        return 0;
    int sum = 0;
    bool left = mode != TOP_DC_PRED, top = mode != LEFT_DC_PRED;
    for (int i = 0; i < n; i++)
        sum += (left ? IPRED_LINE(n - 1 - i) : 0) + (top ? IPRED_LINE(n + 1 + i) : 0);
    int shift = log2n + (left && top ? 1 : 0);
    return (sum + (1 << (shift - 1))) >> shift;
}

// Pixel (x, y) of an n x n block predicted with `mode` (converted) from the line; `dc`: the
// block's IPRED_DC_FN.
int IPRED_FN(uint mode, int n, int log2n, int x, int y, int dc)
{
    // top[i] is at top + i, left[i] (FFmpeg's, bottom to top) at i; the diagonals that run
    // off the top repeat its last pixel (a 4x4's top-right: index 7)
    int top = n + 1, last = n == 4 ? 7 : n - 1;
    int k = 0, step = 1;
    bool halved = false;
    switch (mode) {
    case VERT_PRED:
        k = top + x;
        step = 0;
        break;
    case HOR_PRED:
        k = n - 1 - y;
        step = 0;
        break;
    case DIAG_DOWN_LEFT_PRED:
        // a 4x4's last pixel is top[7] itself
        k = n == 4 && x + y >= 6 ? 7 : x + y;
        break;
    case DIAG_DOWN_RIGHT_PRED:
        k = n - 1 - y + x;
        break;
    case VERT_RIGHT_PRED: {
        int m = n / 2 - 1 - y / 2 + x;
        bool even = (y & 1) == 0;
        if (m >= n / 2 - 1) {
            k = m + n / 2 + (even ? 1 : 0);
            halved = even;
        } else {
            k = even ? 2 * m + 2 : 2 * m + 1;
        }
        break;
    }
    case HOR_DOWN_PRED: {
        int idx = 2 * n - 2 - 2 * y + x;
        k = idx >= 2 * n ? idx - n : idx >> 1;
        halved = idx < 2 * n && (idx & 1) == 0;
        break;
    }
    case VERT_LEFT_PRED:
        k = y / 2 + x;
        halved = (y & 1) == 0;
        break;
    case HOR_UP_PRED:
        // FFmpeg's left edge top to bottom here: left[i] is at n - 1 - i, past its end the
        // last pixel
        k = 2 * y + x;
        halved = (k & 1) == 0;
        k >>= 1;
        break;
    }
    int i0 = k, i1 = k + step, i2 = k + 2 * step;
    if (mode == DIAG_DOWN_LEFT_PRED || mode == VERT_LEFT_PRED) {
        i0 = top + min(k, last);
        i1 = top + min(k + 1, last);
        i2 = top + min(k + 2, last);
    } else if (mode == HOR_UP_PRED) {
        i0 = n - 1 - min(k, n - 1);
        i1 = n - 1 - min(k + 1, n - 1);
        i2 = n - 1 - min(k + 2, n - 1);
    } else if (mode == TM_VP8_PRED) {
        i0 = top + x;
        i1 = n - 1 - y;
        i2 = n;
    } else if (halved) {
        i2 = i1; // (unused; k + 2 may be past the line's end)
    }
    int a = IPRED_LINE(i0), b = IPRED_LINE(i1), c = IPRED_LINE(i2);
    if (mode == TM_VP8_PRED)
        return clamp(a + b - c, 0, (1 << IPRED_BIT_DEPTH) - 1);
    if (mode == DC_PRED || mode == LEFT_DC_PRED || mode == TOP_DC_PRED)
        return dc;
    int mid = 128 << (IPRED_BIT_DEPTH - 8);
    if (mode == DC_128_PRED)
        return mid;
    if (mode == DC_127_PRED)
        return mid - 1;
    if (mode == DC_129_PRED)
        return mid + 1;
    return halved ? (a + b + 1) >> 1 : (a + 2 * b + c + 2) >> 2;
}
