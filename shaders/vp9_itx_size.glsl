// One size of vp9_itx.glsl's transforms, included once per size with ITX_N, ITX_SHIFT (the
// final rounding), ITX_IDCT, ITX_IADST (where the size has one), ITX_HAS_WHT (4x4) and the
// names of its functions (ITX_1D, ITX_RESIDUAL).

void ITX_1D(uint kind, in int v[ITX_N], bool first_pass, out int o[ITX_N])
{
#ifdef ITX_HIGH
    // (A pass of zeros, which the caller skips, flags nothing.)
    bool wht = kind == TX_WHT;
    for (int k = 0; k < ITX_N; k++)
        watch_input(ITX_N, wht, first_pass, v[k]);
    watch_sums(ITX_N, kind, wht, first_pass, v[0], v[1], v[2], v[3]);
#endif
#ifdef ITX_HAS_WHT
    if (kind == TX_WHT) {
        iwht4(v, first_pass, o);
        return;
    }
#endif
#ifdef ITX_HIGH
    // FFmpeg's dctint: the values widened, transformed exactly, stored as int32.
    DCT i[ITX_N], r[ITX_N];
    for (int k = 0; k < ITX_N; k++)
        i[k] = dct_of(v[k]);
#ifdef ITX_IADST
    if (kind == TX_ADST)
        ITX_IADST(i, r);
    else
#endif
        ITX_IDCT(i, r);
    for (int k = 0; k < ITX_N; k++)
        o[k] = dct_store(r[k]);
#else
#ifdef ITX_IADST
    if (kind == TX_ADST) {
        ITX_IADST(v, o);
        return;
    }
#endif
    ITX_IDCT(v, o);
#endif
}

// The residual of each live slot's block into itx_mid (slot s's row r, column c at
// s * N * (N + 1) + r * (N + 1) + c): invocation `inv` computes column inv % N of slot inv / N.
// Reports a block whose 16-bit lanes overflowed. Every invocation calls it (it has barriers)
// with the same size; it returns after a barrier, the residuals complete.
void ITX_RESIDUAL(bool live, uint coef, int eob, uint first, uint second)
{
    uint inv = gl_LocalInvocationID.x;
    uint lane = inv % uint(ITX_N);
    uint base = inv / uint(ITX_N) * uint(ITX_N * (ITX_N + 1));
#if ITX_N == 32
    // FFmpeg has no other 32x32 transform: idct_idct takes every type (an intra block's mode
    // names one), its DC shortcut too, whose arithmetic its SIMD at 10 and 12 bits has apart.
    bool dc_only = eob == 1;
#else
    bool dc_only = first == TX_DCT && second == TX_DCT && eob == 1;
#endif
    bool wht = first == TX_WHT;
    lanes = 0;
    int o[ITX_N];
    if (live && !dc_only) {
        // First pass: column `lane` of the coefficients -> row `lane` of the intermediate.
        int c[ITX_N];
        bool coded = false;
        for (int k = 0; k < ITX_N; k++) {
            c[k] = ITX_COEF(coef + uint(k * ITX_N) + lane);
            coded = coded || c[k] != 0;
        }
        // A column without coefficients (most, in a big block) transforms to zeros: its
        // invocations skip the arithmetic.
        if (coded) {
            ITX_1D(first, c, true, o);
        } else {
            for (int k = 0; k < ITX_N; k++)
                o[k] = 0;
        }
        for (int k = 0; k < ITX_N; k++)
            itx_mid[base + lane * uint(ITX_N + 1) + uint(k)] = stored(o[k]);
    }
    barrier();
    if (live) {
        int res[ITX_N];
        if (dc_only) {
            // No 16-bit lane can overflow here: |dc| <= 32768 keeps every step in range.
            int t = dc_only_value(ITX_COEF(coef));
            int r = v(t + (1 << (ITX_SHIFT - 1))) >> ITX_SHIFT;
#ifdef ITX_HIGH
            watch_dc_only(ITX_N, ITX_COEF(coef), r);
#endif
            for (int k = 0; k < ITX_N; k++)
                res[k] = r;
        } else {
            // Second pass: column `lane` of the intermediate -> column `lane` of the residual,
            // in its place (no other invocation reads that column).
            int c[ITX_N];
            for (int k = 0; k < ITX_N; k++)
                c[k] = itx_mid[base + uint(k * (ITX_N + 1)) + lane];
            ITX_1D(second, c, false, o);
            for (int k = 0; k < ITX_N; k++) {
                int x = stored(o[k]);
                res[k] = wht ? x : v(x + (1 << (ITX_SHIFT - 1))) >> ITX_SHIFT;
#ifdef ITX_HIGH
                watch_output(ITX_N, wht, x, res[k]);
#endif
            }
        }
        for (int r = 0; r < ITX_N; r++)
            itx_mid[base + uint(r * (ITX_N + 1)) + lane] = res[r];
    }
    itx_lanes[inv] = lanes;
    barrier();
    if (live && lane == 0u) {
        int all = 0;
        for (uint k = 0u; k < uint(ITX_N); k++)
            all |= itx_lanes[inv + k];
        if (lanes_overflowed(all))
            ITX_REPORT();
    }
}
