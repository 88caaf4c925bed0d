// AV1 CDEF by rows, second level: a workgroup per 8x8 luma block of the row's strips (jobs:
// the strips' blocks in rows), which finds the block's direction and filters its luma and
// chroma as dav1d's dav1d_cdef_brow does, reading only the snapshot (cdef_row.glsl) and
// writing only the block's own pixels. src/kernels/cdef_row.rs is this arithmetic on the CPU.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#include "cdef_row.glsl"

const uint HAVE_LEFT = 1u;
const uint HAVE_RIGHT = 2u;
const uint HAVE_TOP = 4u;
const uint HAVE_BOTTOM = 8u;

// The two taps (dx, dy) of each direction, with the table's two extra directions on either
// side: entry dir + 2 is direction dir (dav1d's dav1d_cdef_directions).
const ivec2 DIRECTIONS[12][2] = ivec2[12][2](
    ivec2[2](ivec2(0, 1), ivec2(0, 2)), ivec2[2](ivec2(0, 1), ivec2(-1, 2)),
    ivec2[2](ivec2(1, -1), ivec2(2, -2)), ivec2[2](ivec2(1, 0), ivec2(2, -1)),
    ivec2[2](ivec2(1, 0), ivec2(2, 0)), ivec2[2](ivec2(1, 0), ivec2(2, 1)),
    ivec2[2](ivec2(1, 1), ivec2(2, 2)), ivec2[2](ivec2(0, 1), ivec2(1, 2)),
    ivec2[2](ivec2(0, 1), ivec2(0, 2)), ivec2[2](ivec2(0, 1), ivec2(-1, 2)),
    ivec2[2](ivec2(1, -1), ivec2(2, -2)), ivec2[2](ivec2(1, 0), ivec2(2, -1)));
// dav1d's divisors of the directions' partial sums, and chroma's direction for 4:2:2.
const uint DIV[7] = uint[7](840u, 420u, 280u, 210u, 168u, 140u, 120u);
const int UV_DIRECTIONS_422[8] = int[8](7, 0, 2, 4, 5, 6, 6, 6);

shared int luma[64];
shared uint costs[8];

// The block being filtered: plane, first pixel, size, sides present.
uint b_plane;
ivec2 b_at, b_size;
uint b_edges;
int mn, mx;

// A tap at (x, y) of the plane; i16::MIN where the block's side is missing, which the
// arithmetic ignores (as in cdef.comp).
int tap(ivec2 at)
{
    ivec2 rel = at - b_at;
    bool missing = (rel.x < 0 && (b_edges & HAVE_LEFT) == 0u) ||
                   (rel.x >= b_size.x && (b_edges & HAVE_RIGHT) == 0u) ||
                   (rel.y < 0 && (b_edges & HAVE_TOP) == 0u) ||
                   (rel.y >= b_size.y && (b_edges & HAVE_BOTTOM) == 0u);
    int p = missing ? -32768 : snap(b_plane, at.x, at.y);
    // dav1d keeps the minimum as unsigned and the maximum as signed: i16::MIN is neither.
    mn = int(min(uint(p), uint(mn)));
    mx = max(p, mx);
    return p;
}

int constrain(int diff, int threshold, int shift)
{
    int adiff = abs(diff);
    int v = min(adiff, max(0, threshold - (adiff >> (shift & 31))));
    return diff < 0 ? -v : v;
}

int filter_pixel(ivec2 at, int primary, int secondary, int dir, int damping)
{
    int bitdepth_min_8 = int(r(R_BITDEPTH_MIN_8));
    int px0 = snap(b_plane, at.x, at.y);
    mn = px0;
    mx = px0;
    int sum = 0;
    if (primary != 0) {
        int pri_tap = 4 - ((primary >> bitdepth_min_8) & 1);
        int pri_shift = max(0, damping - findMSB(uint(primary)));
        for (int k = 0; k < 2; k++) {
            ivec2 off = DIRECTIONS[dir + 2][k];
            sum += pri_tap * constrain(tap(at + off) - px0, primary, pri_shift);
            sum += pri_tap * constrain(tap(at - off) - px0, primary, pri_shift);
            pri_tap = (pri_tap & 3) | 2;
        }
    }
    if (secondary != 0) {
        int sec_shift = damping - findMSB(uint(secondary));
        for (int k = 0; k < 2; k++) {
            int sec_tap = 2 - k;
            ivec2 off2 = DIRECTIONS[dir + 4][k];
            ivec2 off3 = DIRECTIONS[dir][k];
            sum += sec_tap * constrain(tap(at + off2) - px0, secondary, sec_shift);
            sum += sec_tap * constrain(tap(at - off2) - px0, secondary, sec_shift);
            sum += sec_tap * constrain(tap(at + off3) - px0, secondary, sec_shift);
            sum += sec_tap * constrain(tap(at - off3) - px0, secondary, sec_shift);
        }
    }
    int v = px0 + ((sum - int(sum < 0) + 8) >> 4);
    if (primary != 0 && secondary != 0)
        v = v < mn ? mn : (v > mx ? mx : v);
    return v;
}

void store(uint p, ivec2 at, int v)
{
    uint i = r(R_PLANE + 2u * p) + uint(at.y) * r(R_PLANE + 2u * p + 1u) +
             uint(at.x) * bytes_per_pixel();
    px[i] = uint8_t(v & 0xff);
    if (r(R_TWO_BYTES) != 0u)
        px[i + 1u] = uint8_t(v >> 8);
}

// Pixel `i` of the block, for every pixel of plane p's w x h block at `at`.
void filter_block(uint p, ivec2 at, ivec2 size, uint i, int primary, int secondary, int dir,
                  int damping)
{
    b_plane = p;
    b_at = at;
    b_size = size;
    ivec2 pixel = at + ivec2(int(i) % size.x, int(i) / size.x);
    store(p, pixel, filter_pixel(pixel, primary, secondary, dir, damping));
}

uint sq(int v) { return uint(v) * uint(v); }

// The cost of direction d over the luma block in `luma` (dav1d's cdef_find_dir_c: each
// direction sums the pixels along its lines, and weighs the squared sums by line length).
uint direction_cost(uint d)
{
    int part[15];
    for (int n = 0; n < 15; n++)
        part[n] = 0;
    for (int y = 0; y < 8; y++) {
        for (int x = 0; x < 8; x++) {
            int n;
            switch (d) {
            case 0u: n = y + x; break;
            case 1u: n = y + (x >> 1); break;
            case 2u: n = y; break;
            case 3u: n = 3 + y - (x >> 1); break;
            case 4u: n = 7 + y - x; break;
            case 5u: n = 3 - (y >> 1) + x; break;
            case 6u: n = x; break;
            default: n = (y >> 1) + x; break;
            }
            part[n] += luma[y * 8 + x];
        }
    }
    uint cost = 0u;
    if (d == 2u || d == 6u) {
        for (int n = 0; n < 8; n++)
            cost += sq(part[n]);
        cost *= 105u;
    } else if (d == 0u || d == 4u) {
        for (int n = 0; n < 7; n++)
            cost += (sq(part[n]) + sq(part[14 - n])) * DIV[n];
        cost += sq(part[7]) * 105u;
    } else {
        for (int m = 0; m < 5; m++)
            cost += sq(part[3 + m]);
        cost *= 105u;
        for (int m = 0; m < 3; m++)
            cost += (sq(part[m]) + sq(part[10 - m])) * DIV[2 * m + 1];
    }
    return cost;
}

int adjust_strength(int strength, uint variance)
{
    if (variance == 0u)
        return 0;
    int i = (variance >> 6) != 0u ? min(findMSB(variance >> 6), 12) : 0;
    return (strength * (4 + i) + 8) >> 4;
}

int strength_code(uint base, uint idx) { return int((r(base + idx / 4u) >> (8u * (idx % 4u))) & 0xffu); }

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
    uint job = pc.first_job + gl_WorkGroupID.x;
    uint half_bw = r(R_BW) / 2u;
    uint strip = job / half_bw;
    uint bx = (job % half_bw) * 2u, by = r(R_BY_START) + 2u * strip;
    // Whether CDEF filters the block (the same answer in every invocation).
    uint sb64_row = (by >> 4) - (r(R_BY_START) >> 4);
    uint idx = uint(rec_bytes[r(R_CDEF_IDX) + sb64_row * r(R_SB64_COLS) + (bx >> 4)]);
    if (idx >= 8u) // -1: none
        return;
    int y_level = strength_code(R_Y_STRENGTH, idx), uv_level = strength_code(R_UV_STRENGTH, idx);
    uint noskip = rec[r(R_NOSKIP) + strip * r(R_SB128_COLS) + (bx >> 5)];
    if ((y_level == 0 && uv_level == 0) || (noskip & (3u << (bx & 30u))) == 0u)
        return;

    int bd8 = int(r(R_BITDEPTH_MIN_8));
    int y_pri = (y_level >> 2) << bd8, uv_pri = (uv_level >> 2) << bd8;
    int y_sec = y_level & 3, uv_sec = uv_level & 3;
    y_sec = (y_sec + int(y_sec == 3)) << bd8;
    uv_sec = (uv_sec + int(uv_sec == 3)) << bd8;
    uint lane = gl_LocalInvocationID.x;
    int dir = 0;
    uint variance = 0u;
    if (y_pri != 0 || uv_pri != 0) {
        luma[lane] = (snap(0u, int(bx * 4u + lane % 8u), int(by * 4u + lane / 8u)) >> bd8) - 128;
        memoryBarrierShared();
        barrier();
        if (lane < 8u)
            costs[lane] = direction_cost(lane);
        memoryBarrierShared();
        barrier();
        uint best = costs[0];
        for (int n = 1; n < 8; n++) {
            if (costs[n] > best) {
                best = costs[n];
                dir = n;
            }
        }
        variance = (best - costs[dir ^ 4]) >> 10;
    }

    b_edges = (bx > 0u ? HAVE_LEFT : 0u) | (bx + 2u < r(R_BW) ? HAVE_RIGHT : 0u) |
              (by > 0u ? HAVE_TOP : 0u) | (by + 2u < r(R_BH) ? HAVE_BOTTOM : 0u);
    int damping = int(r(R_DAMPING));
    ivec2 at = ivec2(bx * 4u, by * 4u);
    if (y_pri != 0) {
        int adjusted = adjust_strength(y_pri, variance);
        if (adjusted != 0 || y_sec != 0)
            filter_block(0u, at, ivec2(8), lane, adjusted, y_sec, dir, damping);
    } else if (y_sec != 0) {
        filter_block(0u, at, ivec2(8), lane, 0, y_sec, 0, damping);
    }
    if (uv_level != 0 && r(R_PLANES) == 3u) {
        uint ss_h = r(R_SS_H), ss_v = r(R_SS_V);
        int uv_dir = uv_pri == 0 ? 0 : (ss_h == 1u && ss_v == 0u ? UV_DIRECTIONS_422[dir] : dir);
        ivec2 size = ivec2(8 >> ss_h, 8 >> ss_v);
        uint n = uint(size.x * size.y);
        ivec2 uv_at = ivec2(at.x >> ss_h, at.y >> ss_v);
        for (uint i = lane; i < 2u * n; i += 64u)
            filter_block(1u + i / n, uv_at, size, i % n, uv_pri, uv_sec, uv_dir, damping - 1);
    }
}
