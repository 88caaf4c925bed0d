// VP9 intra prediction as FFmpeg 5.1 does it (src/kernels/ipred.rs is the reference):
// the modes and what each reads (check_intra_mode's tables, vp9recon.c), and the predictors
// of vp9dsp_template.c written per pixel (vp9_ipred_fn.glsl), so that an invocation computes
// any pixel alone.

const uint VERT_PRED = 0u;
const uint HOR_PRED = 1u;
const uint DC_PRED = 2u;
const uint DIAG_DOWN_LEFT_PRED = 3u;
const uint DIAG_DOWN_RIGHT_PRED = 4u;
const uint VERT_RIGHT_PRED = 5u;
const uint HOR_DOWN_PRED = 6u;
const uint VERT_LEFT_PRED = 7u;
const uint HOR_UP_PRED = 8u;
const uint TM_VP8_PRED = 9u;
const uint LEFT_DC_PRED = 10u;
const uint TOP_DC_PRED = 11u;
const uint DC_128_PRED = 12u;
const uint DC_127_PRED = 13u;
const uint DC_129_PRED = 14u;

// check_intra_mode's mode_conv: the mode used without a left (bit 1) or top (bit 0)
// neighbour, a nibble per (have_left, have_top), for the ten modes a block names.
const uint MODE_CONV[10] = uint[10](0x0d0du, 0x11eeu, 0x2abcu, 0x3d3du, 0x4444u, 0x5555u,
                                    0x6666u, 0x7d7du, 0x88eeu, 0x910eu);

uint convert_mode(uint mode, bool have_left, bool have_top)
{
    uint nibble = (have_left ? 2u : 0u) + (have_top ? 1u : 0u);
    return (MODE_CONV[mode] >> (4u * nibble)) & 15u;
}

const uint NEEDS_LEFT = 1u;
const uint NEEDS_TOP = 2u;
const uint NEEDS_TOPLEFT = 4u;
const uint NEEDS_TOPRIGHT = 8u;

// check_intra_mode's edges: what each of the 15 modes reads.
uint edge_needs(uint mode)
{
    const uint needs[15] = uint[15](2u, 1u, 3u, 10u, 7u, 7u, 7u, 10u, 1u, 7u, 1u, 2u, 0u, 0u, 0u);
    return needs[mode];
}

int avg2(int a, int b) { return (a + b + 1) >> 1; }
int avg3(int a, int b, int c) { return (a + 2 * b + c + 2) >> 2; }
