// AV1 CDEF as dav1d 1.0.0 runs it (src/kernels/cdef.rs: `filter_pixel` is this shader's
// arithmetic, line for line). A job is one 8x8, 4x8 or 4x4 block; its padded input window
// (12 x 12 values, i16::MIN where a side is missing) was taken when dav1d made the call, so
// the shader reads only the window and writes only the block. Invocation `lane` computes
// pixel (lane % 8, lane / 8); lanes outside a 4-wide or 4-high block do nothing.
//
// Job (uvec4): x = byte offset of the block's top-left pixel in `px`, y = stride in bytes
// (signed), z = index of the window's first value in `coefs`, w = parameters
// (cdef::job_params): primary strength (bits 0-7), secondary (8-15), direction (16-18),
// damping (19-23), size (24-25: 8x8, 4x8, 4x4), bits per pixel minus 8 (26-28), two bytes per
// pixel (29).
#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_GOOGLE_include_directive : require
#include "jobs.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Jobs { uvec4 jobs[]; };
layout(std430, set = 0, binding = 1) readonly buffer Coefs { int16_t coefs[]; };
layout(std430, set = 0, binding = 2) buffer Pixels { uint8_t px[]; };

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

const int S = 12; // the window's stride
// Window offsets of the two taps of each direction, with two extra entries on either side
// (entry dir + 2 is direction dir): dav1d's dav1d_cdef_directions for stride 12.
const ivec2 DIRECTIONS[12] = ivec2[12](
    ivec2(S, 2 * S), ivec2(S, 2 * S - 1),
    ivec2(-S + 1, -2 * S + 2), ivec2(1, -S + 2), ivec2(1, 2), ivec2(1, S + 2),
    ivec2(S + 1, 2 * S + 2), ivec2(S, 2 * S + 1), ivec2(S, 2 * S), ivec2(S, 2 * S - 1),
    ivec2(-S + 1, -2 * S + 2), ivec2(1, -S + 2));

int constrain(int diff, int threshold, int shift)
{
    int adiff = abs(diff);
    // dav1d's damping keeps shift at 0 or more; out of range it wraps as on x86.
    int v = min(adiff, max(0, threshold - (adiff >> (shift & 31))));
    return diff < 0 ? -v : v;
}

int ulog2(int v)
{
    return findMSB(uint(v));
}

uint window_base;
int px0, mn, mx;

int tap(int offset)
{
    int p = int(coefs[window_base + uint(offset)]);
    // dav1d keeps the minimum as unsigned and the maximum as signed: i16::MIN is neither.
    mn = int(min(uint(p), uint(mn)));
    mx = max(p, mx);
    return p;
}

void main()
{
    uint job = gl_WorkGroupID.x;
    if (job >= pc.job_count)
        return;
    uvec4 jb = jobs[pc.first_job + job];
    if (jb.x == SKIP_JOB)
        return; // taken out of the batch again (src/batch/call.rs)
    uint params = jb.w;
    int primary = int(params & 0xffu);
    int secondary = int((params >> 8) & 0xffu);
    int dir = int((params >> 16) & 7u);
    int damping = int((params >> 19) & 31u);
    uint size = (params >> 24) & 3u;
    int bitdepth_min_8 = int((params >> 26) & 7u);
    bool wide = ((params >> 29) & 1u) != 0u;
    int w = size == 0u ? 8 : 4;
    int h = size >= 2u ? 4 : 8; // as from_job_params: 3 reads as 4x4
    int x = int(gl_LocalInvocationID.x % 8u);
    int y = int(gl_LocalInvocationID.x / 8u);
    if (x >= w || y >= h)
        return;

    window_base = jb.z + uint((y + 2) * S + x + 2);
    px0 = int(coefs[window_base]);
    mn = px0;
    mx = px0;
    int sum = 0;
    if (primary != 0) {
        int pri_tap = 4 - ((primary >> bitdepth_min_8) & 1);
        int pri_shift = max(0, damping - ulog2(primary));
        for (int k = 0; k < 2; k++) {
            int off = DIRECTIONS[dir + 2][k];
            sum += pri_tap * constrain(tap(off) - px0, primary, pri_shift);
            sum += pri_tap * constrain(tap(-off) - px0, primary, pri_shift);
            pri_tap = (pri_tap & 3) | 2;
        }
    }
    if (secondary != 0) {
        int sec_shift = damping - ulog2(secondary);
        for (int k = 0; k < 2; k++) {
            int sec_tap = 2 - k;
            int off2 = DIRECTIONS[dir + 4][k];
            int off3 = DIRECTIONS[dir][k];
            sum += sec_tap * constrain(tap(off2) - px0, secondary, sec_shift);
            sum += sec_tap * constrain(tap(-off2) - px0, secondary, sec_shift);
            sum += sec_tap * constrain(tap(off3) - px0, secondary, sec_shift);
            sum += sec_tap * constrain(tap(-off3) - px0, secondary, sec_shift);
        }
    }
    int v = px0 + ((sum - int(sum < 0) + 8) >> 4);
    if (primary != 0 && secondary != 0)
        v = v < mn ? mn : (v > mx ? mx : v);

    int stride = int(jb.y);
    if (wide) {
        uint at = jb.x + uint(y * stride + 2 * x);
        px[at] = uint8_t(v & 0xff);
        px[at + 1u] = uint8_t(v >> 8);
    } else {
        px[jb.x + uint(y * stride + x)] = uint8_t(v);
    }
}
