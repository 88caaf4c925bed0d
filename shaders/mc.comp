// VP9 motion compensation, 8-bit, every function of FFmpeg's `mc` table (src/kernels/mc.rs).
// A job is one tile of up to 8x8 output pixels of a call; invocation `col` of a job computes
// column `col` of its tile, all rows, so no invocation waits for another.
//
// Job (two uvec4): x = byte offset of the tile's top-left pixel in `px`, y = its stride (signed),
// z = byte offset in `src` of the source pixel under it (the call's source window, copied at
// call time), w = the window's stride; then x = parameters (McFn::params | tile_params).
#version 450
#extension GL_EXT_shader_8bit_storage : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Jobs { uvec4 jobs[]; };
// The stream's upload buffer (coefficients for the transforms), here read as bytes.
layout(std430, set = 0, binding = 1) readonly buffer Source { uint8_t src[]; };
layout(std430, set = 0, binding = 2) buffer Pixels { uint8_t px[]; };

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

// VP9's 8-tap filters: [smooth, regular, sharp][16 positions][8 taps] (as SUBPEL_FILTERS).
const int FILTERS[3 * 16 * 8] = int[](
    0, 0, 0, 128, 0, 0, 0, 0,
    -3, -1, 32, 64, 38, 1, -3, 0,
    -2, -2, 29, 63, 41, 2, -3, 0,
    -2, -2, 26, 63, 43, 4, -4, 0,
    -2, -3, 24, 62, 46, 5, -4, 0,
    -2, -3, 21, 60, 49, 7, -4, 0,
    -1, -4, 18, 59, 51, 9, -4, 0,
    -1, -4, 16, 57, 53, 12, -4, -1,
    -1, -4, 14, 55, 55, 14, -4, -1,
    -1, -4, 12, 53, 57, 16, -4, -1,
    0, -4, 9, 51, 59, 18, -4, -1,
    0, -4, 7, 49, 60, 21, -3, -2,
    0, -4, 5, 46, 62, 24, -3, -2,
    0, -4, 4, 43, 63, 26, -2, -2,
    0, -3, 2, 41, 63, 29, -2, -2,
    0, -3, 1, 38, 64, 32, -1, -3,
    0, 0, 0, 128, 0, 0, 0, 0,
    0, 1, -5, 126, 8, -3, 1, 0,
    -1, 3, -10, 122, 18, -6, 2, 0,
    -1, 4, -13, 118, 27, -9, 3, -1,
    -1, 4, -16, 112, 37, -11, 4, -1,
    -1, 5, -18, 105, 48, -14, 4, -1,
    -1, 5, -19, 97, 58, -16, 5, -1,
    -1, 6, -19, 88, 68, -18, 5, -1,
    -1, 6, -19, 78, 78, -19, 6, -1,
    -1, 5, -18, 68, 88, -19, 6, -1,
    -1, 5, -16, 58, 97, -19, 5, -1,
    -1, 4, -14, 48, 105, -18, 5, -1,
    -1, 4, -11, 37, 112, -16, 4, -1,
    -1, 3, -9, 27, 118, -13, 4, -1,
    0, 2, -6, 18, 122, -10, 3, -1,
    0, 1, -3, 8, 126, -5, 1, 0,
    0, 0, 0, 128, 0, 0, 0, 0,
    -1, 3, -7, 127, 8, -3, 1, 0,
    -2, 5, -13, 125, 17, -6, 3, -1,
    -3, 7, -17, 121, 27, -10, 5, -2,
    -4, 9, -20, 115, 37, -13, 6, -2,
    -4, 10, -23, 108, 48, -16, 8, -3,
    -4, 10, -24, 100, 59, -19, 9, -3,
    -4, 11, -24, 90, 70, -21, 10, -4,
    -4, 11, -23, 80, 80, -23, 11, -4,
    -4, 10, -21, 70, 90, -24, 11, -4,
    -3, 9, -19, 59, 100, -24, 10, -4,
    -3, 8, -16, 48, 108, -23, 10, -4,
    -2, 6, -13, 37, 115, -20, 9, -4,
    -2, 5, -10, 27, 121, -17, 7, -3,
    -1, 3, -6, 17, 125, -13, 5, -2,
    0, 1, -3, 8, 127, -7, 3, -1
);

uint src_at(uint base, int row, int stride, int col)
{
    return uint(src[base + uint(row * stride + col)]);
}

int clip_pixel(int x)
{
    return clamp(x, 0, 255);
}

// 8-tap filter of the source row `row` at column `col` (reads col - 3 .. col + 4).
int tap8_row(uint base, int row, int stride, int col, int f)
{
    int sum = 64;
    for (int k = 0; k < 8; k++)
        sum += FILTERS[f + k] * int(src_at(base, row, stride, col + k - 3));
    return clip_pixel(sum >> 7);
}

int bilin(int a, int b, int m)
{
    return a + ((m * (b - a) + 8) >> 4);
}

void main()
{
    uint job = gl_GlobalInvocationID.x / 8u;
    int col = int(gl_GlobalInvocationID.x % 8u);
    if (job >= pc.job_count)
        return;
    uint j = 2u * (pc.first_job + job);
    uvec4 a = jobs[j];
    uint p = jobs[j + 1u].x;
    int rows = int((p >> 13) & 7u) + 1;
    int cols = int((p >> 16) & 7u) + 1;
    if (col >= cols)
        return;
    int mx = int(p & 15u);
    int my = int((p >> 4) & 15u);
    int kind = int((p >> 8) & 3u);
    bool avg = (p & (1u << 10)) != 0u;
    bool hor = (p & (1u << 11)) != 0u;
    bool ver = (p & (1u << 12)) != 0u;
    int dst_stride = int(a.y);
    int ss = int(a.w);
    uint base = a.z;

    // The column before the vertical pass: source rows -3 .. rows + 4 (8-tap), 0 .. rows
    // (bilinear), or just the block's rows; horizontally filtered where there is such a pass.
    int mid[15];
    int first = 0;
    int count = rows;
    if (ver) {
        first = kind == 3 ? 0 : -3;
        count = kind == 3 ? rows + 1 : rows + 7;
    }
    for (int i = 0; i < 15; i++) {
        if (i < count) {
            int r = first + i;
            int v;
            if (!hor)
                v = int(src_at(base, r, ss, col));
            else if (kind == 3)
                v = bilin(int(src_at(base, r, ss, col)), int(src_at(base, r, ss, col + 1)), mx);
            else
                v = tap8_row(base, r, ss, col, (kind * 16 + mx) * 8);
            mid[i] = v;
        }
    }
    int fy = (kind * 16 + my) * 8;
    for (int i = 0; i < 8; i++) {
        if (i < rows) {
            int v;
            if (!ver) {
                v = mid[i];
            } else if (kind == 3) {
                v = bilin(mid[i], mid[i + 1], my);
            } else {
                int sum = 64;
                for (int k = 0; k < 8; k++)
                    sum += FILTERS[fy + k] * mid[i + k];
                v = clip_pixel(sum >> 7);
            }
            uint at = a.x + uint(i * dst_stride + col);
            if (avg)
                v = (int(px[at]) + v + 1) >> 1;
            px[at] = uint8_t(v);
        }
    }
}
