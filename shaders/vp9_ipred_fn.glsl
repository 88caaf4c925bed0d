// The predictors of vp9_ipred.glsl, per pixel, over edges the includer names (included once
// per place the edges are kept): IPRED_TOP(i) the pixel above column i (up to 8 for a 4x4,
// whose diagonal modes read the top-right), IPRED_TL the top-left pixel, IPRED_LEFT(i) the
// pixel left of row i, top to bottom; IPRED_FN the function's name. (FFmpeg keeps its left
// edge bottom to top, except for HOR_UP: these read FFmpeg's `left[k]` as IPRED_LEFT(n - 1 - k).)

// The diagonal modes' edge line, bottom-left to top-right: FFmpeg's left[0 .. n), the
// top-left, then top[0 ..).
#define IPRED_LINE(k) ((k) < n ? IPRED_LEFT(n - 1 - (k)) : ((k) == n ? IPRED_TL : IPRED_TOP((k) - n - 1)))

// Pixel (x, y) of an n x n block predicted with `mode` (converted) from the edges.
int IPRED_FN(uint mode, int n, int log2n, int x, int y)
{
    switch (mode) {
    case VERT_PRED:
        return IPRED_TOP(x);
    case HOR_PRED:
        return IPRED_LEFT(y);
    case TM_VP8_PRED:
        return clamp(IPRED_TOP(x) + IPRED_LEFT(y) - IPRED_TL, 0, 255);
    case DC_PRED:
    case LEFT_DC_PRED:
    case TOP_DC_PRED: {
        int sum = 0;
        bool left = mode != TOP_DC_PRED, top = mode != LEFT_DC_PRED;
        for (int i = 0; i < n; i++)
            sum += (left ? IPRED_LEFT(i) : 0) + (top ? IPRED_TOP(i) : 0);
        int shift = log2n + (left && top ? 1 : 0);
        return (sum + (1 << (shift - 1))) >> shift;
    }
    case DC_128_PRED:
        return 128;
    case DC_127_PRED:
        return 127;
    case DC_129_PRED:
        return 129;
    case DIAG_DOWN_LEFT_PRED: {
        int k = x + y;
        if (n == 4)
            return k < 6 ? avg3(IPRED_TOP(k), IPRED_TOP(k + 1), IPRED_TOP(k + 2)) : IPRED_TOP(7);
        if (k < n - 2)
            return avg3(IPRED_TOP(k), IPRED_TOP(k + 1), IPRED_TOP(k + 2));
        if (k == n - 2)
            return (IPRED_TOP(n - 2) + 3 * IPRED_TOP(n - 1) + 2) >> 2;
        return IPRED_TOP(n - 1);
    }
    case DIAG_DOWN_RIGHT_PRED: {
        int k = n - 1 - y + x;
        return avg3(IPRED_LINE(k), IPRED_LINE(k + 1), IPRED_LINE(k + 2));
    }
    case VERT_RIGHT_PRED: {
        int m = n / 2 - 1 - y / 2 + x;
        bool even = (y & 1) == 0;
        if (m >= n / 2 - 1) {
            int k = m + n / 2;
            return even ? avg2(IPRED_LINE(k + 1), IPRED_LINE(k + 2))
                        : avg3(IPRED_LINE(k), IPRED_LINE(k + 1), IPRED_LINE(k + 2));
        }
        int k = even ? 2 * m + 2 : 2 * m + 1;
        return avg3(IPRED_LINE(k), IPRED_LINE(k + 1), IPRED_LINE(k + 2));
    }
    case HOR_DOWN_PRED: {
        int idx = 2 * n - 2 - 2 * y + x;
        if (idx >= 2 * n) {
            int k = n + idx - 2 * n;
            return avg3(IPRED_LINE(k), IPRED_LINE(k + 1), IPRED_LINE(k + 2));
        }
        int k = idx >> 1;
        return (idx & 1) == 0 ? avg2(IPRED_LINE(k), IPRED_LINE(k + 1))
                              : avg3(IPRED_LINE(k), IPRED_LINE(k + 1), IPRED_LINE(k + 2));
    }
    case VERT_LEFT_PRED: {
        int k = y / 2 + x;
        bool even = (y & 1) == 0;
        if (n == 4)
            return even ? avg2(IPRED_TOP(k), IPRED_TOP(k + 1))
                        : avg3(IPRED_TOP(k), IPRED_TOP(k + 1), IPRED_TOP(k + 2));
        if (k >= n - 1)
            return IPRED_TOP(n - 1);
        if (even)
            return avg2(IPRED_TOP(k), IPRED_TOP(k + 1));
        if (k < n - 2)
            return avg3(IPRED_TOP(k), IPRED_TOP(k + 1), IPRED_TOP(k + 2));
        return (IPRED_TOP(n - 2) + 3 * IPRED_TOP(n - 1) + 2) >> 2;
    }
    default: { // HOR_UP_PRED, whose left edge FFmpeg keeps top to bottom
        int idx = 2 * y + x;
        if (idx >= 2 * n - 2)
            return IPRED_LEFT(n - 1);
        int i = idx >> 1;
        if ((idx & 1) == 0)
            return avg2(IPRED_LEFT(i), IPRED_LEFT(i + 1));
        if (i < n - 2)
            return avg3(IPRED_LEFT(i), IPRED_LEFT(i + 1), IPRED_LEFT(i + 2));
        return (IPRED_LEFT(n - 2) + 3 * IPRED_LEFT(n - 1) + 2) >> 2;
    }
    }
}

#undef IPRED_LINE
