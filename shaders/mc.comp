// VP9 motion compensation, 8-bit, every function of FFmpeg's `mc` table (src/kernels/mc.rs).
// A job is one tile of up to 8x8 output pixels of a call; invocation `col` of a job computes
// column `col` of its tile, all rows, so no invocation waits for another.
//
// Job (three uvec4): x = byte offset of the tile's top-left pixel in `px`, y = its stride
// (signed), z = byte offset in `src` of the source pixel under it, w = the source's stride
// (signed; `src` is the reference frame read in place, or the arena holding a source window
// copied at call time); then x = parameters (McFunction::params |
// tile_params), y, z = the horizontal 8-tap filter, w and the next x = the vertical one, each
// tap + 32 in a byte. (The taps travel with the job: a constant table indexed at run time
// becomes a private copy per invocation on some compilers, llvmpipe's among them.)
#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_GOOGLE_include_directive : require
#include "jobs.glsl"
#include "mc_filter.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Jobs { uvec4 jobs[]; };
layout(std430, set = 0, binding = 2) buffer Pixels { uint8_t px[]; };
layout(std430, set = 0, binding = 4) readonly buffer Source { uint8_t src[]; };

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;


uint src_at(uint base, int row, int stride, int col)
{
    return uint(src[base + uint(row * stride + col)]);
}

// 8-tap filter of the source row `row` at column `col` (reads col - 3 .. col + 4).
int tap8_row(uint base, int row, int stride, int col, Taps taps)
{
    ivec4 a = ivec4(0), b = ivec4(0);
    for (int k = 0; k < 8; k++)
        shift_in(a, b, int(src_at(base, row, stride, col + k - 3)));
    return filter_8tap(taps, a, b);
}

void main()
{
    uint job = gl_GlobalInvocationID.x / 8u;
    int col = int(gl_GlobalInvocationID.x % 8u);
    if (job >= pc.job_count)
        return;
    uint j = 3u * (pc.first_job + job);
    uvec4 a = jobs[j];
    if (a.x == SKIP_JOB)
        return; // taken out of the batch again (src/batch/call.rs)
    uvec4 b = jobs[j + 1u];
    uvec2 htaps = b.yz;
    uvec2 vtaps = uvec2(b.w, jobs[j + 2u].x);
    uint p = b.x;
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
    Taps ht = unpack_taps(htaps.x, htaps.y);
    Taps vt = unpack_taps(vtaps.x, vtaps.y);

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
                v = filter_bilin(int(src_at(base, r, ss, col)), int(src_at(base, r, ss, col + 1)),
                                 mx);
            else
                v = tap8_row(base, r, ss, col, ht);
            mid[i] = v;
        }
    }
    for (int i = 0; i < 8; i++) {
        if (i < rows) {
            int v;
            if (!ver) {
                v = mid[i];
            } else if (kind == 3) {
                v = filter_bilin(mid[i], mid[i + 1], my);
            } else {
                v = filter_8tap(vt, ivec4(mid[i], mid[i + 1], mid[i + 2], mid[i + 3]),
                                ivec4(mid[i + 4], mid[i + 5], mid[i + 6], mid[i + 7]));
            }
            uint at = a.x + uint(i * dst_stride + col);
            if (avg)
                v = (int(px[at]) + v + 1) >> 1;
            px[at] = uint8_t(v);
        }
    }
}
