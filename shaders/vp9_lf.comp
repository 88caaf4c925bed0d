// The frame path's loop filter (src/vp9/frame/loopfilter.rs): one plane of a superblock a
// workgroup, its columns pass then its rows pass, with the superblock loop filter of the
// per-call path (lf_sb_pass.glsl), reading the levels and edge masks the decoder built while
// parsing (FFmpeg's VP9Filter) and the frame's thresholds from the frame's data; then the
// corner handoff (filter_next_corner). The dispatches keep FFmpeg's order as a wavefront over
// the superblocks.
//
// VP9_HIGH (the variant vp9_lf_high): 10 and 12 bits, the depth the header's, 16-bit pixels.
//
// Job (a word of the frame's job list): the superblock (bits 0-23), the plane (24-25).
#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_GOOGLE_include_directive : require
// variant: vp9_lf_high VP9_HIGH

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Data { uint data[]; };
#ifdef VP9_HIGH
#define LF_PIXEL uint16_t
#define LF_WORD_PIXELS 2
// (Read once by main: see vp9_frame.glsl's read_depth.)
#define LF_BIT_DEPTH lf_depth
const uint PIXEL_SHIFT = 1u;
#else
#define LF_PIXEL uint8_t
#define LF_WORD_PIXELS 4
const uint PIXEL_SHIFT = 0u;
#endif
// The frame's pixels four ways, as lf_sb_pass.glsl reads them.
layout(std430, set = 0, binding = 1) buffer Pixels { LF_PIXEL px[]; };
layout(std430, set = 0, binding = 1) coherent buffer CoherentPixels { LF_PIXEL px_coherent[]; };
layout(std430, set = 0, binding = 1) buffer PixelWords { uint px_words[]; };
layout(std430, set = 0, binding = 1) coherent buffer CoherentPixelWords { uint px_words_coherent[]; };

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

// Header words (vp9_frame.glsl).
const uint H_SB_COLS = 2u;
const uint H_SS_H = 4u;
const uint H_SS_V = 5u;
const uint H_PLANE = 8u;
const uint H_LOOPFILTER = 21u;
const uint H_BIT_DEPTH = 23u;
const uint H_JOBS = 26u;
const uint H_LIMITS = 176u;

#ifdef VP9_HIGH
int lf_depth = 10;
#endif
#define LF_RECORD_FROM_INCLUDER
#define LF_CORNER_HANDOFF
// The plane's last 8-line segment: 7, or 3 where chroma is subsampled vertically.
uint last_segment(uint params) { return (8u >> ((params >> 1) & 1u)) - 1u; }
void filter_next_corner(uvec4 jb, uint l, bool both, bool tiled);
#include "lf_sb_pass.glsl"

// The superblock right of this one: its levels and its columns pass's masks, for the left
// edge of its plane's last 8 lines (none at the frame's right).
shared uint next_record[24];
bool has_next = false;

// The corner handoff (src/vp9/frame/loopfilter.rs): after this superblock's passes, the left
// edge of the last 8 lines of the superblock right of it, which that superblock's columns
// pass leaves out. The rows pass of the superblock below this one reaches into those lines;
// filtered here, that superblock need not wait for the one above right. Every invocation
// calls it (barriers inside).
void filter_next_corner(uvec4 jb, uint l, bool both, bool tiled)
{
    if (!has_next)
        return;
    if (l < 24u)
        record[l] = next_record[l];
    barrier();
    uint sh = jb.z & 1u, last = last_segment(jb.z);
    uvec4 next = uvec4(jb.x + (64u >> sh), jb.y, jb.z & ~4u, jb.w);
    // The segment's table: the left edge alone.
    if (l < EDGES)
        table[last * EDGES + l] = l == 0u ? column_slots(next.z, last, 0u).x : 0u;
    barrier();
    uint word = table[last * EDGES];
    if (word == 0u || l >> 3 != last)
        return;
    // One edge of one line: its 16 pixels around the edge, filtered, the changed ones back.
    int wd = ((word >> 6) & 3u) == 1u ? 4 : (((word >> 6) & 3u) == 2u ? 8 : 16);
    uint first = next.x + l * next.y - 8u;
    // This superblock's 8 pixels as its passes left them, where they reached them; the rest,
    // which nothing of the workgroup wrote, from the frame.
    int v[16];
    for (int j = 0; j < 16; j++) {
        uint left = j < 8 && tiled && both ? corner_px[8u * (l & 7u) + uint(j)] : CORNER_UNSET;
        v[j] = left != CORNER_UNSET
                   ? int(left)
                   : int(load_pixel(first + uint(j), both && j < 8 && !tiled));
    }
    ivec2 r = filter_values(v, wd, int((word >> 8) & 0xffu), int((word >> 16) & 0xffu),
                            int(word >> 24));
    for (int j = 0; j < 16; j++)
        if (j >= r.x && j < r.y)
            store_pixel(first + uint(j), v[j], both);
}

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
#ifdef VP9_HIGH
    lf_depth = int(data[H_BIT_DEPTH]);
#endif
    uint job = data[data[H_JOBS] + pc.first_job + gl_WorkGroupID.x];
    uint sb = job & 0xffffffu, p = (job >> 24) & 3u;
    uint l = gl_LocalInvocationID.x;
    // The record lf_sb_pass.glsl reads: the 64 levels, the plane's columns and rows masks
    // (VP9Filter.mask[plane > 0]), the E and I thresholds of each level.
    // FFmpeg filters 4:4:4 chroma with the luma masks (it builds no others then).
    uint sh = p == 0u ? 0u : data[H_SS_H], sv = p == 0u ? 0u : data[H_SS_V];
    uint masks = (sh | sv) != 0u ? 32u : 16u;
    uint at_filter = (data[H_LOOPFILTER] + 192u * sb) >> 2;
    if (l < 16u)
        record[l] = data[at_filter + l];
    else if (l < 32u)
        record[l] = data[at_filter + masks + (l - 16u)];
    else
        record[l] = data[H_LIMITS + (l - 32u)];
    uint sb_cols = data[H_SB_COLS];
    uint col = sb % sb_cols, row = sb / sb_cols;
    // (The next superblock's record lies 192 bytes on.)
    has_next = col + 1u < sb_cols;
    if (has_next && l < 24u)
        next_record[l] = data[at_filter + 48u + (l < 16u ? l : masks + (l - 16u))];
    // (in pixels: the header has bytes)
    uint stride = data[H_PLANE + 2u * p + 1u] >> PIXEL_SHIFT;
    uint at = (data[H_PLANE + 2u * p] >> PIXEL_SHIFT) + (row * 64u >> sv) * stride +
              (col * 64u >> sh);
    uint params = sh | (sv << 1) | (col == 0u ? 4u : 0u) | (row == 0u ? 8u : 0u);
    filter_recorded_plane(uvec4(at, stride, params, 0u), int(l));
}
