// VP9 1-D inverse transforms with FFmpeg 5.1's arithmetic, the same text at every bit depth:
// its values are of type DCT, FFmpeg's `dctint`, whose +, -, unary - and * by a constant are
// GLSL's own and whose r14 (the Q14 rounding) and v come with it:
// - 8 bits (the default): DCT is int, 32-bit and wrapping, as FFmpeg's 8-bit C computes (most
//   of it as unsigned). Mirrors src/kernels/itx.rs line for line. Outputs are not yet
//   truncated to int16 (the caller does that where FFmpeg stores to int16_t).
// - 10 and 12 bits (ITX_HIGH defined, itx_high.glsl): DCT is an exact integer in three limbs,
//   FFmpeg's 64-bit dctint, which these values never overflow.
//
// v(x) marks each value that FFmpeg's 8-bit SIMD keeps in a 16-bit lane and records it in
// `lanes` (see Lanes in src/kernels/itx.rs): FFmpeg's C and SIMD agree exactly while all of
// them fit.

#ifdef ITX_HIGH
#include "itx_high.glsl"
#else
#define DCT int
int lanes = 0;

int v(int x)
{
    lanes |= x ^ (x >> 31);
    return x;
}

bool lanes_overflowed(int l) { return l > 0x7fff; }

int r14(int x) { return (x + 8192) >> 14; }

int trunc16(int x) { return (x << 16) >> 16; }
#endif

// Butterfly rotation (a*c - b*s, a*s + b*c), each rounded.
void rot(DCT a, DCT b, int c, int s, out DCT x, out DCT y)
{
    x = v(r14(a * c - b * s));
    y = v(r14(a * s + b * c));
}

void idct4(in DCT i[4], out DCT o[4])
{
    DCT t0 = v(r14(v(i[0] + i[2]) * 11585));
    DCT t1 = v(r14(v(i[0] - i[2]) * 11585));
    DCT t2, t3;
    rot(i[1], i[3], 6270, 15137, t2, t3);
    o[0] = v(t0 + t3); o[1] = v(t1 + t2); o[2] = v(t1 - t2); o[3] = v(t0 - t3);
}

void idct8(in DCT i[8], out DCT o[8])
{
    DCT e[4];
    idct4(DCT[4](i[0], i[2], i[4], i[6]), e);
    DCT t4a, t7a, t5a, t6a;
    rot(i[1], i[7], 3196, 16069, t4a, t7a);
    rot(i[5], i[3], 13623, 9102, t5a, t6a);
    DCT t4 = v(t4a + t5a);
    DCT t7 = v(t7a + t6a);
    DCT d5 = v(t4a - t5a);
    DCT d6 = v(t7a - t6a);
    DCT t5 = v(r14(v(d6 - d5) * 11585));
    DCT t6 = v(r14(v(d6 + d5) * 11585));
    DCT od[4] = DCT[4](t7, t6, t5, t4);
    for (int k = 0; k < 4; k++) {
        o[k] = v(e[k] + od[k]);
        o[7 - k] = v(e[k] - od[k]);
    }
}

void idct16(in DCT i[16], out DCT o[16])
{
    DCT e[8];
    idct8(DCT[8](i[0], i[2], i[4], i[6], i[8], i[10], i[12], i[14]), e);
    DCT t8a, t15a, t9a, t14a, t10a, t13a, t11a, t12a;
    rot(i[1], i[15], 1606, 16305, t8a, t15a);
    rot(i[9], i[7], 12665, 10394, t9a, t14a);
    rot(i[5], i[11], 7723, 14449, t10a, t13a);
    rot(i[13], i[3], 15679, 4756, t11a, t12a);

    DCT t8 = v(t8a + t9a);
    DCT t9 = v(t8a - t9a);
    DCT t10 = v(t11a - t10a);
    DCT t11 = v(t11a + t10a);
    DCT t12 = v(t12a + t13a);
    DCT t13 = v(t12a - t13a);
    DCT t14 = v(t15a - t14a);
    DCT t15 = v(t15a + t14a);

    rot(t14, t9, 6270, 15137, t9a, t14a);
    t10a = v(r14(-(t13 * 15137 + t10 * 6270)));
    t13a = v(r14(t13 * 6270 - t10 * 15137));

    t8a = v(t8 + t11);
    t9 = v(t9a + t10a);
    t10 = v(t9a - t10a);
    t11a = v(t8 - t11);
    t12a = v(t15 - t12);
    t13 = v(t14a - t13a);
    t14 = v(t14a + t13a);
    t15a = v(t15 + t12);

    t10a = v(r14(v(t13 - t10) * 11585));
    t13a = v(r14(v(t13 + t10) * 11585));
    t11 = v(r14(v(t12a - t11a) * 11585));
    t12 = v(r14(v(t12a + t11a) * 11585));

    DCT od[8] = DCT[8](t15a, t14, t13a, t12, t11, t10a, t9, t8a);
    for (int k = 0; k < 8; k++) {
        o[k] = v(e[k] + od[k]);
        o[15 - k] = v(e[k] - od[k]);
    }
}

void idct32(in DCT i[32], out DCT o[32])
{
    DCT even[16];
    for (int k = 0; k < 16; k++)
        even[k] = i[2 * k];
    DCT e[16];
    idct16(even, e);

    DCT t16a, t31a, t17a, t30a, t18a, t29a, t19a, t28a;
    DCT t20a, t27a, t21a, t26a, t22a, t25a, t23a, t24a;
    rot(i[1], i[31], 804, 16364, t16a, t31a);
    rot(i[17], i[15], 12140, 11003, t17a, t30a);
    rot(i[9], i[23], 7005, 14811, t18a, t29a);
    rot(i[25], i[7], 15426, 5520, t19a, t28a);
    rot(i[5], i[27], 3981, 15893, t20a, t27a);
    rot(i[21], i[11], 14053, 8423, t21a, t26a);
    rot(i[13], i[19], 9760, 13160, t22a, t25a);
    rot(i[29], i[3], 16207, 2404, t23a, t24a);

    DCT t16 = v(t16a + t17a);
    DCT t17 = v(t16a - t17a);
    DCT t18 = v(t19a - t18a);
    DCT t19 = v(t19a + t18a);
    DCT t20 = v(t20a + t21a);
    DCT t21 = v(t20a - t21a);
    DCT t22 = v(t23a - t22a);
    DCT t23 = v(t23a + t22a);
    DCT t24 = v(t24a + t25a);
    DCT t25 = v(t24a - t25a);
    DCT t26 = v(t27a - t26a);
    DCT t27 = v(t27a + t26a);
    DCT t28 = v(t28a + t29a);
    DCT t29 = v(t28a - t29a);
    DCT t30 = v(t31a - t30a);
    DCT t31 = v(t31a + t30a);

    rot(t30, t17, 3196, 16069, t17a, t30a);
    t18a = v(r14(-(t29 * 16069 + t18 * 3196)));
    t29a = v(r14(t29 * 3196 - t18 * 16069));
    rot(t26, t21, 13623, 9102, t21a, t26a);
    t22a = v(r14(-(t25 * 9102 + t22 * 13623)));
    t25a = v(r14(t25 * 13623 - t22 * 9102));

    t16a = v(t16 + t19);
    t17 = v(t17a + t18a);
    t18 = v(t17a - t18a);
    t19a = v(t16 - t19);
    t20a = v(t23 - t20);
    t21 = v(t22a - t21a);
    t22 = v(t22a + t21a);
    t23a = v(t23 + t20);
    t24a = v(t24 + t27);
    t25 = v(t25a + t26a);
    t26 = v(t25a - t26a);
    t27a = v(t24 - t27);
    t28a = v(t31 - t28);
    t29 = v(t30a - t29a);
    t30 = v(t30a + t29a);
    t31a = v(t31 + t28);

    rot(t29, t18, 6270, 15137, t18a, t29a);
    rot(t28a, t19a, 6270, 15137, t19, t28);
    t20 = v(r14(-(t27a * 15137 + t20a * 6270)));
    t27 = v(r14(t27a * 6270 - t20a * 15137));
    t21a = v(r14(-(t26 * 15137 + t21 * 6270)));
    t26a = v(r14(t26 * 6270 - t21 * 15137));

    t16 = v(t16a + t23a);
    t17a = v(t17 + t22);
    t18 = v(t18a + t21a);
    t19a = v(t19 + t20);
    t20a = v(t19 - t20);
    t21 = v(t18a - t21a);
    t22a = v(t17 - t22);
    t23 = v(t16a - t23a);
    t24 = v(t31a - t24a);
    t25a = v(t30 - t25);
    t26 = v(t29a - t26a);
    t27a = v(t28 - t27);
    t28a = v(t28 + t27);
    t29 = v(t29a + t26a);
    t30a = v(t30 + t25);
    t31 = v(t31a + t24a);

    t20 = v(r14(v(t27a - t20a) * 11585));
    t27 = v(r14(v(t27a + t20a) * 11585));
    t21a = v(r14(v(t26 - t21) * 11585));
    t26a = v(r14(v(t26 + t21) * 11585));
    t22 = v(r14(v(t25a - t22a) * 11585));
    t25 = v(r14(v(t25a + t22a) * 11585));
    t23a = v(r14(v(t24 - t23) * 11585));
    t24a = v(r14(v(t24 + t23) * 11585));

    DCT od[16] = DCT[16](t31, t30a, t29, t28a, t27, t26a, t25, t24a,
                         t23a, t22, t21a, t20, t19a, t18, t17a, t16);
    for (int k = 0; k < 16; k++) {
        o[k] = v(e[k] + od[k]);
        o[31 - k] = v(e[k] - od[k]);
    }
}

void iadst4(in DCT i[4], out DCT o[4])
{
    DCT t0 = i[0] * 5283 + i[2] * 15212 + i[3] * 9929;
    DCT t1 = i[0] * 9929 - i[2] * 5283 - i[3] * 15212;
    DCT t2 = v(v(i[0] - i[2]) + i[3]) * 13377;
    DCT t3 = i[1] * 13377;
    o[0] = v(r14(t0 + t3)); o[1] = v(r14(t1 + t3)); o[2] = v(r14(t2)); o[3] = v(r14(t0 + t1 - t3));
}

void iadst8(in DCT i[8], out DCT o[8])
{
    DCT t0a = i[7] * 16305 + i[0] * 1606;
    DCT t1a = i[7] * 1606 - i[0] * 16305;
    DCT t2a = i[5] * 14449 + i[2] * 7723;
    DCT t3a = i[5] * 7723 - i[2] * 14449;
    DCT t4a = i[3] * 10394 + i[4] * 12665;
    DCT t5a = i[3] * 12665 - i[4] * 10394;
    DCT t6a = i[1] * 4756 + i[6] * 15679;
    DCT t7a = i[1] * 15679 - i[6] * 4756;

    DCT t0 = v(r14(t0a + t4a));
    DCT t1 = v(r14(t1a + t5a));
    DCT t2 = v(r14(t2a + t6a));
    DCT t3 = v(r14(t3a + t7a));
    DCT t4 = v(r14(t0a - t4a));
    DCT t5 = v(r14(t1a - t5a));
    DCT t6 = v(r14(t2a - t6a));
    DCT t7 = v(r14(t3a - t7a));

    t4a = t4 * 15137 + t5 * 6270;
    t5a = t4 * 6270 - t5 * 15137;
    t6a = t7 * 15137 - t6 * 6270;
    t7a = t7 * 6270 + t6 * 15137;

    DCT t2b = v(t0 - t2);
    DCT t3b = v(t1 - t3);
    DCT t6b = v(r14(t4a - t6a));
    DCT t7b = v(r14(t5a - t7a));
    o[0] = v(t0 + t2);
    o[1] = v(-v(r14(t4a + t6a)));
    o[2] = v(r14(v(t6b + t7b) * 11585));
    o[3] = v(-v(r14(v(t2b + t3b) * 11585)));
    o[4] = v(r14(v(t2b - t3b) * 11585));
    o[5] = v(-v(r14(v(t6b - t7b) * 11585)));
    o[6] = v(r14(t5a + t7a));
    o[7] = v(-v(t1 + t3));
}

void iadst16(in DCT i[16], out DCT o[16])
{
    // First stage: rotations of input pairs (15,0), (13,2), ... (1,14), not rounded.
    DCT t0 = i[15] * 16364 + i[0] * 804,    t1 = i[15] * 804 - i[0] * 16364;
    DCT t2 = i[13] * 15893 + i[2] * 3981,   t3 = i[13] * 3981 - i[2] * 15893;
    DCT t4 = i[11] * 14811 + i[4] * 7005,   t5 = i[11] * 7005 - i[4] * 14811;
    DCT t6 = i[9] * 13160 + i[6] * 9760,    t7 = i[9] * 9760 - i[6] * 13160;
    DCT t8 = i[7] * 11003 + i[8] * 12140,   t9 = i[7] * 12140 - i[8] * 11003;
    DCT t10 = i[5] * 8423 + i[10] * 14053,  t11 = i[5] * 14053 - i[10] * 8423;
    DCT t12 = i[3] * 5520 + i[12] * 15426,  t13 = i[3] * 15426 - i[12] * 5520;
    DCT t14 = i[1] * 2404 + i[14] * 16207,  t15 = i[1] * 16207 - i[14] * 2404;

    DCT t0a = v(r14(t0 + t8));
    DCT t1a = v(r14(t1 + t9));
    DCT t2a = v(r14(t2 + t10));
    DCT t3a = v(r14(t3 + t11));
    DCT t4a = v(r14(t4 + t12));
    DCT t5a = v(r14(t5 + t13));
    DCT t6a = v(r14(t6 + t14));
    DCT t7a = v(r14(t7 + t15));
    DCT t8a = v(r14(t0 - t8));
    DCT t9a = v(r14(t1 - t9));
    DCT t10a = v(r14(t2 - t10));
    DCT t11a = v(r14(t3 - t11));
    DCT t12a = v(r14(t4 - t12));
    DCT t13a = v(r14(t5 - t13));
    DCT t14a = v(r14(t6 - t14));
    DCT t15a = v(r14(t7 - t15));

    t8 = t8a * 16069 + t9a * 3196;
    t9 = t8a * 3196 - t9a * 16069;
    t10 = t10a * 9102 + t11a * 13623;
    t11 = t10a * 13623 - t11a * 9102;
    t12 = t13a * 16069 - t12a * 3196;
    t13 = t13a * 3196 + t12a * 16069;
    t14 = t15a * 9102 - t14a * 13623;
    t15 = t15a * 13623 + t14a * 9102;

    t0 = v(t0a + t4a);
    t1 = v(t1a + t5a);
    t2 = v(t2a + t6a);
    t3 = v(t3a + t7a);
    t4 = v(t0a - t4a);
    t5 = v(t1a - t5a);
    t6 = v(t2a - t6a);
    t7 = v(t3a - t7a);
    t8a = v(r14(t8 + t12));
    t9a = v(r14(t9 + t13));
    t10a = v(r14(t10 + t14));
    t11a = v(r14(t11 + t15));
    t12a = v(r14(t8 - t12));
    t13a = v(r14(t9 - t13));
    t14a = v(r14(t10 - t14));
    t15a = v(r14(t11 - t15));

    t4a = t4 * 15137 + t5 * 6270;
    t5a = t4 * 6270 - t5 * 15137;
    t6a = t7 * 15137 - t6 * 6270;
    t7a = t7 * 6270 + t6 * 15137;
    t12 = t12a * 15137 + t13a * 6270;
    t13 = t12a * 6270 - t13a * 15137;
    t14 = t15a * 15137 - t14a * 6270;
    t15 = t15a * 6270 + t14a * 15137;

    t2a = v(t0 - t2);
    t3a = v(t1 - t3);
    t6 = v(r14(t4a - t6a));
    t7 = v(r14(t5a - t7a));
    t10 = v(t8a - t10a);
    t11 = v(t9a - t11a);
    t14a = v(r14(t12 - t14));
    t15a = v(r14(t13 - t15));

    o[0] = v(t0 + t2);
    o[1] = v(-v(t8a + t10a));
    o[2] = v(r14(t12 + t14));
    o[3] = v(-v(r14(t4a + t6a)));
    o[4] = v(r14(v(t7 + t6) * 11585));
    o[5] = v(r14(v(-v(t14a + t15a)) * 11585));
    o[6] = v(r14(v(t11 + t10) * 11585));
    o[7] = v(r14(v(-v(t2a + t3a)) * 11585));
    o[8] = v(r14(v(t2a - t3a) * 11585));
    o[9] = v(r14(v(t11 - t10) * 11585));
    o[10] = v(r14(v(t14a - t15a) * 11585));
    o[11] = v(r14(v(t7 - t6) * 11585));
    o[12] = v(r14(t5a + t7a));
    o[13] = v(-v(r14(t13 + t15)));
    o[14] = v(t9a + t11a);
    o[15] = v(-v(t1 + t3));
}

void iwht4(in int i[4], bool first_pass, out int o[4])
{
    int s = first_pass ? 2 : 0;
    int t0 = v(i[0] >> s);
    int t1 = v(i[3] >> s);
    int t2 = v(i[1] >> s);
    int t3 = v(i[2] >> s);
    t0 = v(t0 + t2);
    t3 = v(t3 - t1);
    int t4 = v(v(t0 - t3) >> 1);
    t1 = v(t4 - t1);
    t2 = v(t4 - t2);
    t0 = v(t0 - t1);
    t3 = v(t3 + t2);
    o[0] = t0; o[1] = t1; o[2] = t2; o[3] = t3;
}
