// One plane of a superblock's loop filter (src/kernels/lf_sb.rs), shared by lf_sb.comp (a
// workgroup per plane) and the frame path's vp9_lf.comp, which loads the record itself
// (LF_RECORD_FROM_INCLUDER). The includer declares `coefs` (but for that one), and the frame's
// pixels as `px` and `px_coherent` (the same bytes; the passes read and write them through
// `px_coherent`, since the rows pass reads what other invocations wrote in the columns pass),
// of type LF_PIXEL (8 bits unless it says otherwise; at 16, LF_BIT_DEPTH gives the depth and
// LF_WORD_PIXELS is 2: the pixels a word of `px_words` holds). Offsets and strides count
// pixels.
// The workgroup first walks the plane's edge masks as FFmpeg's `ff_vp9_loopfilter_sb`
// does, an invocation per segment and step of the walk, into a table per pass; then each pass
// filters: invocation `line` filters line `line` of the superblock (a row for the columns
// pass, a column for the rows pass), edge after edge in FFmpeg's order as the table lists
// them for the line's 8-line segment. Lines of a pass are independent: each reads and writes
// only its own pixels. A line is read once, filtered edge after edge in the invocation's own
// memory, and what changed is written back once: one round trip to the frame's memory (host
// memory where it is imported) instead of one per edge. Where the plane's rows start on a word,
// reads and writes go by words (`px_words`, `px_words_coherent`: the same bytes again): a
// columns pass's invocation reads its own row, a rows pass's workgroup reads all the rows into
// shared memory first.
//
// Job (uvec4): x = byte offset in `px` of the superblock's first pixel, y = stride (signed),
// z = parameters (bit 0: ss_h, bit 1: ss_v, bit 2: at the frame's left, bit 3: at its top),
// w = first coefficient of the plane's record in `coefs` (256 bytes: the levels of the 64
// blocks, the columns pass's masks [row][16, 8, 4, inner 4], the rows pass's, the E and I
// thresholds of each level).

#include "lf_filter.glsl"

#ifndef LF_PIXEL
#define LF_PIXEL uint8_t
#define LF_WORD_PIXELS 4
#endif
const int WORD_PIXELS = LF_WORD_PIXELS;
const uint PIXEL_BITS = 32u / uint(LF_WORD_PIXELS);
const uint PIXEL_MASK = (1u << PIXEL_BITS) - 1u;
// A superblock's row of 64 pixels in words.
const uint ROW_WORDS = 64u / uint(LF_WORD_PIXELS);

const uint EDGES = 16u;
// A line's pixels across: 8 before the superblock to 8 after it. Read into registers (or the
// invocation's local memory) with a fixed loop, so that the reads go out together. Indexed at
// run time, the array lives in private memory: on V3D that is scratch memory behind the TMU,
// as shared memory is there too, so shared memory would not be faster.
const int SPAN = 80;

// The plane's record (64 words, loaded by the whole workgroup at once: one round trip to the
// job data, host memory where it is uploaded) and the tables the walk writes: per pass, 16
// slots for each of the 8 segments, an edge word or 0; then each (pass, segment) list's edges
// moved to its front, in order (`list_edges`): `list_count` of them, reaching `list_reach`.
shared uint record[64];
shared uint table[2u * EDGES * 8u];
shared uint list_count[16];
shared ivec2 list_reach[16];
// Where the plane's rows start on a word, the rows pass's pixels are first read by the whole
// workgroup into `rows_tile`: its 80 rows (8 above the superblock to 8 below), ROW_WORDS words
// each, consecutive invocations reading consecutive words, a fourth (at 16 bits a half) of the
// accesses of reading a pixel at a time (on the H100, with frames in host memory, a fifth
// less GPU time for the loop filter).
const uint TILE_WORDS = 80u * ROW_WORDS;
shared uint rows_tile[TILE_WORDS];
#ifdef LF_CORNER_HANDOFF
// The corner handoff's pixels of this superblock (the last 8 columns of the plane's last 8
// lines, [line][column]) as the passes left them, from the lines that filtered them: read back
// from the frame they would need coherent reads (what other invocations wrote), which the
// H100 makes one after the other (docs/benchmarks-history.md). CORNER_UNSET where neither
// pass reached the pixel.
shared uint corner_px[64];
const uint CORNER_UNSET = 0xffffffffu;
#endif

uint record_byte(uint i)
{
    return (record[i >> 2] >> (8u * (i & 3u))) & 0xffu;
}

// Mask byte `width` (0: 16, 1: 8, 2: 4, 3: inner 4) of mask row `row` of pass `pass`.
uint mask_byte(uint pass, uint row, uint width)
{
    return record_byte(64u + 32u * pass + 4u * row + width);
}

// The table word of an edge at `pos` (0..63) `code` wide (1: 4, 2: 8, 3: 16) with the
// thresholds of block level `level_at`'s level: E, I and H (src/kernels/lf_sb.rs).
uint edge_at(uint pos, uint code, uint level_at)
{
    uint l = record_byte(level_at) & 63u;
    return pos | (code << 6) | (record_byte(128u + l) << 8) | (record_byte(192u + l) << 16) |
           ((l >> 4) << 24);
}

// FFmpeg's rule for a block edge across two 8-line halves (marked, 16 wide, 8 wide, where its
// level is): the word of half `which`. A 16-wide first half takes the 16-line function (the
// second half too, with the first's level, where it is 16 wide as well) and leaves a narrower
// second half alone; otherwise each marked half takes its own width and level.
uint block_edge(uint which, uint pos, bvec3 first, uint first_at, bvec3 second, uint second_at)
{
    if (first.x && first.y)
        return which == 0u || second.y ? edge_at(pos, 3u, first_at) : 0u;
    bvec3 h = which == 0u ? first : second;
    return h.x ? edge_at(pos, h.z ? 2u : 1u, which == 0u ? first_at : second_at) : 0u;
}

// One step of FFmpeg's walk of the columns pass (`filter_plane_cols`): segment `seg`, mask
// column `bit`, into slots `2 bit` (the block edge) and `2 bit + 1` (the inner edge).
uvec2 column_slots(uint params, uint seg, uint bit)
{
    uint ss_h = params & 1u, ss_v = (params >> 1) & 1u;
    uint pair = seg >> 1, which = seg & 1u; // the pair of mask rows, and which of the two
    if (pair >= (4u >> ss_v))
        return uvec2(0u);
    uint y = pair * (2u << ss_v), y2 = y + 1u + ss_v;
    uint x = 1u << bit;
    uint a0 = mask_byte(0u, y, 0u), a1 = mask_byte(0u, y, 1u), a2 = mask_byte(0u, y, 2u);
    uint a3 = mask_byte(0u, y, 3u);
    uint b0 = mask_byte(0u, y2, 0u), b1 = mask_byte(0u, y2, 1u), b2 = mask_byte(0u, y2, 2u);
    uint b3 = mask_byte(0u, y2, 3u);
    uint hm1 = a0 | a1 | a2, hm2 = b1 | b2;
    if (((hm1 | hm2 | a3 | b3) & ~(x - 1u)) == 0u)
        return uvec2(0u);
    uint pos = bit * (8u >> ss_h);
    uint l = y * 8u + (ss_h != 0u ? (bit & ~1u) : bit);
    uint below = 8u << ss_v;
    uvec2 slots = uvec2(0u);
    if ((params & 4u) == 0u || bit > 0u)
        slots.x = block_edge(which, pos, bvec3((hm1 & x) != 0u, (a0 & x) != 0u, (a1 & x) != 0u), l,
                             bvec3((hm2 & x) != 0u, (b0 & x) != 0u, (b1 & x) != 0u), l + below);
    uint inner = which == 0u ? a3 : b3;
    if (ss_h == 0u && (inner & x) != 0u)
        slots.y = edge_at(pos + 4u, 1u, l + which * below);
    return slots;
}

// One step of FFmpeg's walk of the rows pass (`filter_plane_rows`): segment `seg`, mask row
// `row`, into slots `2 row` (the block edge) and `2 row + 1` (the inner edge).
uvec2 row_slots(uint params, uint seg, uint row)
{
    uint ss_h = params & 1u, ss_v = (params >> 1) & 1u;
    uint bits = 2u << ss_h; // mask bits per pair of 8-line halves
    uint pair = seg >> 1, which = seg & 1u;
    if (pair >= 8u / bits)
        return uvec2(0u);
    uint m0 = mask_byte(1u, row, 0u), m1 = mask_byte(1u, row, 1u), m2 = mask_byte(1u, row, 2u);
    uint m3 = mask_byte(1u, row, 3u);
    uint vm = m0 | m1 | m2;
    uint x = 1u << (pair * bits);
    if ((vm & ~(x - 1u)) == 0u)
        return uvec2(0u);
    uint right = 1u + ss_h;
    uint x2 = x << right;
    uint pos = row * (8u >> ss_v);
    uint l = (ss_v != 0u ? (row & ~1u) : row) * 8u + pair * bits;
    uvec2 slots = uvec2(0u);
    if ((params & 8u) == 0u || row > 0u)
        slots.x = block_edge(which, pos, bvec3((vm & x) != 0u, (m0 & x) != 0u, (m1 & x) != 0u), l,
                             bvec3((vm & x2) != 0u, (m0 & x2) != 0u, (m1 & x2) != 0u), l + right);
    if (ss_v == 0u && (m3 & (which == 0u ? x : x2)) != 0u)
        slots.y = edge_at(pos + 4u, 1u, l + which * right);
    return slots;
}

int reach_of(uint word)
{
    return ((word >> 6) & 3u) == 3u ? 8 : 4;
}

// (Widened before the choice: a choice of 8-bit values would need V3D's missing Int8.)
uint load_pixel(uint at, bool both)
{
    return both ? uint(px_coherent[at]) : uint(px[at]);
}

void store_pixel(uint at, int v, bool both)
{
    if (both)
        px_coherent[at] = LF_PIXEL(v);
    else
        px[at] = LF_PIXEL(v);
}

uint load_word(uint at, bool both)
{
    return both ? px_words_coherent[at] : px_words[at];
}

void store_word(uint at, uint v, bool both)
{
    if (both)
        px_words_coherent[at] = v;
    else
        px_words[at] = v;
}

// Invocation `list` < 16 moves the edges of list `list` (pass `list >> 3`, segment `list & 7`)
// to the front of its slots, in order, and counts them and what they reach across the lines:
// [x, y), empty where there are none. Each line of a pass then walks only its segment's edges
// (where every line walking all 16 slots, twice a pass, took the H100 about a quarter of a
// superblock's time: docs/benchmarks-history.md).
void list_edges(uint list)
{
    uint at = list * EDGES, n = 0u;
    int lo = 64, hi = 0;
    for (uint k = 0u; k < EDGES; k++) {
        uint word = table[at + k];
        if (word == 0u)
            continue;
        table[at + n] = word;
        n++;
        int pos = int(word & 63u);
        lo = min(lo, pos - reach_of(word));
        hi = max(hi, pos + reach_of(word));
    }
    list_count[list] = n;
    list_reach[list] = ivec2(lo, hi);
}

// Reads the words of the plane `jb` that its rows pass reaches into `rows_tile`: the whole
// workgroup, `inv` its invocation, in uniform control flow (barriers inside).
void load_rows_tile(uvec4 jb, uint inv, bool both)
{
    // Four words a round, read before any is stored: the reads of a round go out together,
    // one trip to memory instead of one a word (on the H100, 14 % less time for the loop
    // filter with the line reads below; all of an invocation's words at once cost lavapipe a
    // quarter more, its loop filter's time: docs/benchmarks-history.md).
    const uint PER_INVOCATION = TILE_WORDS / 64u; // 20 words, 40 at 16 bits: whole rounds
    for (uint k0 = 0u; k0 < PER_INVOCATION; k0 += 4u) {
        uint got[4];
        for (uint k = 0u; k < 4u; k++) {
            uint i = inv + 64u * (k0 + k);
            int row = int(i / ROW_WORDS) - 8;
            uint word = i % ROW_WORDS; // of segment word * WORD_PIXELS / 8: 8 columns a segment
            ivec2 reach = list_reach[8u + word * uint(WORD_PIXELS) / 8u];
            got[k] = row >= reach.x && row < reach.y
                         ? load_word((jb.x + uint(row * int(jb.y)) + uint(WORD_PIXELS) * word) /
                                         uint(WORD_PIXELS),
                                     both)
                         : 0u;
        }
        for (uint k = 0u; k < 4u; k++)
            rows_tile[inv + 64u * (k0 + k)] = got[k];
    }
    barrier();
}

// Pixel `at` of column `line` from `rows_tile`.
int rows_tile_pixel(int line, int at)
{
    uint word = rows_tile[uint(at + 8) * ROW_WORDS + uint(line / WORD_PIXELS)];
    return int((word >> (PIXEL_BITS * uint(line % WORD_PIXELS))) & PIXEL_MASK);
}

// Filters line `line` of pass `pass` (0: columns, 1: rows) of the plane `jb`, whose table is
// written; `both`: the job runs both passes; `tiled`: the plane's rows start on a word (the
// rows pass's tile is read).
void filter_line(uvec4 jb, uint pass, int line, bool both, bool tiled)
{
    bool columns = pass == 0u;
    int stride = int(jb.y);
    int across = columns ? 1 : stride;
    uint first = jb.x + uint(line * (columns ? stride : 1));
    uint list = pass * 8u + uint(line / 8);
    uint words = list * EDGES;

    // The pixels this line's edges reach: read once. A columns pass reads what no invocation
    // of the workgroup wrote (a workgroup filters one plane), a rows pass what the columns pass
    // did (`fresh`: through the coherent view, where the job runs both).
    ivec2 reach = list_reach[list];
    int lo = reach.x, hi = reach.y;
    bool fresh = both && !columns;
    if (hi <= lo)
        return;
    int buf[SPAN]; // buf[i + 8]: pixel i across
    // A columns pass's invocations read rows a stride apart, an access each; where the row
    // starts on a word (FFmpeg's planes and strides are aligned), it is read a word at a time,
    // a fourth of the accesses (on the H100, with frames in host memory, a third less GPU time
    // for the loop filter). Its reached range starts and ends on a word (edge positions and
    // reaches are multiples of 4). A rows pass reads its tile, where the plane has one.
    bool by_words = columns && tiled;
    if (by_words) {
        // (Every read before any is unpacked: they go out together.)
        uint got[SPAN / WORD_PIXELS];
        for (int b = 0; b < SPAN; b += WORD_PIXELS) {
            bool reached = b - 8 >= lo && b - 8 < hi;
            got[b / WORD_PIXELS] =
                reached ? load_word((first + uint(b - 8)) / uint(WORD_PIXELS), false) : 0u;
        }
        for (int b = 0; b < SPAN; b += WORD_PIXELS) {
            uint w = got[b / WORD_PIXELS];
            for (int k = 0; k < WORD_PIXELS; k++)
                buf[b + k] = int((w >> (PIXEL_BITS * uint(k))) & PIXEL_MASK);
        }
    } else if (tiled) {
        for (int b = 0; b < SPAN; b++) {
            bool reached = b - 8 >= lo && b - 8 < hi;
            buf[b] = reached ? rows_tile_pixel(line, b - 8) : 0;
        }
    } else {
        for (int b = 0; b < SPAN; b++) {
            bool reached = b - 8 >= lo && b - 8 < hi;
            buf[b] = reached ? int(load_pixel(first + uint((b - 8) * across), fresh)) : 0;
        }
    }

    // What the edges changed: written back once.
    int changed_lo = hi, changed_hi = lo;
    uint edges = list_count[list];
    for (uint k = 0u; k < edges; k++) {
        uint word = table[words + k];
        int wd = ((word >> 6) & 3u) == 1u ? 4 : (((word >> 6) & 3u) == 2u ? 8 : 16);
        int pos = int(word & 63u);
        int v[16];
        for (int j = 0; j < 16; j++)
            v[j] = buf[pos + j];
        ivec2 r = filter_values(v, wd, int((word >> 8) & 0xffu), int((word >> 16) & 0xffu),
                                int(word >> 24));
        if (r.y > r.x) {
            // All 16 back, the unchanged ones as they were: indices known when compiled keep
            // `v` in registers.
            for (int j = 0; j < 16; j++)
                buf[pos + j] = v[j];
            changed_lo = min(changed_lo, pos - 8 + r.x);
            changed_hi = max(changed_hi, pos - 8 + r.y);
        }
    }
    if (by_words) {
        // Whole words: the unchanged pixels they carry are this line's own, read above.
        int word_lo = changed_lo & -WORD_PIXELS;
        int word_hi = (changed_hi + WORD_PIXELS - 1) & -WORD_PIXELS;
        for (int b = 0; b < SPAN; b += WORD_PIXELS) {
            if (b - 8 >= word_lo && b - 8 < word_hi) {
                uint w = 0u;
                for (int k = 0; k < WORD_PIXELS; k++)
                    w |= uint(buf[b + k]) << (PIXEL_BITS * uint(k));
                store_word((first + uint(b - 8)) / uint(WORD_PIXELS), w, both);
            }
        }
    } else {
        for (int b = 0; b < SPAN; b++)
            if (b - 8 >= changed_lo && b - 8 < changed_hi)
                store_pixel(first + uint((b - 8) * across), buf[b], both);
    }
#ifdef LF_CORNER_HANDOFF
    // A line through the corner leaves its pixels there (the rows pass's after the columns
    // pass's: a barrier between them).
    if (tiled && both) {
        int width = 64 >> (jb.z & 1u), last_line = int(last_segment(jb.z)) * 8;
        int across_at = columns ? width - 8 : last_line; // the corner's first pixel across
        int line_at = line - (columns ? last_line : width - 8);
        if (line_at >= 0 && line_at < 8) {
            for (int k = 0; k < 8; k++) {
                int at = across_at + k;
                if (at >= lo && at < hi)
                    corner_px[columns ? 8 * line_at + k : 8 * k + line_at] = uint(buf[at + 8]);
            }
        }
    }
#endif
}

// LF_CORNER_HANDOFF (the frame path's vp9_lf.comp, which defines last_segment and
// filter_next_corner): the columns pass leaves out the left edge of the plane's last 8 lines,
// filtered with the superblock left of it, and after the rows pass filters that edge of the
// superblock right of it (src/vp9/frame/loopfilter.rs).
//
// Filters the plane `jb` whose record each invocation has written its word of (`record[line]`):
// both passes, FFmpeg's columns pass first. Every invocation of the
// workgroup (64) calls it for the same job: the barriers are inside, in control flow that is
// uniform across the workgroup. A workgroup filters one plane (its columns pass reads the frame
// without the coherent view: nothing of the workgroup wrote there before it).
void filter_recorded_plane(uvec4 jb, int line)
{
    uint l = uint(line);
    barrier();
    // The walk: invocation (segment, step) fills two slots of each pass's table.
    uint seg = l >> 3, walk_step = l & 7u;
    uint at = seg * EDGES + 2u * walk_step;
    uvec2 c = column_slots(jb.z, seg, walk_step);
    uvec2 r = row_slots(jb.z, seg, walk_step);
#ifdef LF_CORNER_HANDOFF
    // The left edge of the plane's last 8 lines was filtered with the superblock left of it.
    if (seg == last_segment(jb.z) && walk_step == 0u)
        c.x = 0u;
#endif
    table[at] = c.x;
    table[at + 1u] = c.y;
    table[EDGES * 8u + at] = r.x;
    table[EDGES * 8u + at + 1u] = r.y;
#ifdef LF_CORNER_HANDOFF
    corner_px[l] = CORNER_UNSET;
#endif
    barrier();
    if (l < 16u)
        list_edges(l);
    barrier();
    // The same for every line. (Offsets count from the buffer's binding, at offset 0, where
    // the word view starts too.)
    bool tiled = ((jb.x | jb.y) & uint(WORD_PIXELS - 1)) == 0u;
    // Both passes read and write through `px_coherent`. (Chosen at run time from the job's
    // bits 4 and 5, always 0: with the choice known when compiled, NVIDIA's compiler made the
    // frame path's loop filter 4 % slower on the H200, docs/benchmarks-history.md.)
    bool both = (jb.z & 48u) == 0u;
    filter_line(jb, 0u, line, both, tiled);
    // The columns pass's writes before the rows pass reads them.
    memoryBarrierBuffer();
    barrier();
    if (tiled)
        load_rows_tile(jb, l, both);
    filter_line(jb, 1u, line, both, tiled);
    // The rows pass's writes before the corner handoff reads around them, and the record and
    // tables read before it replaces them.
    memoryBarrierBuffer();
    barrier();
#ifdef LF_CORNER_HANDOFF
    filter_next_corner(jb, l, both, tiled);
#endif
}

#ifndef LF_RECORD_FROM_INCLUDER
// Filters the plane `jb` whose record is in `coefs` at jb.w (see filter_recorded_plane).
void filter_plane(uvec4 jb, int line)
{
    uint l = uint(line);
    uint lo = uint(int(coefs[jb.w + 2u * l])) & 0xffffu;
    uint hi = uint(int(coefs[jb.w + 2u * l + 1u])) & 0xffffu;
    record[l] = lo | (hi << 16);
    filter_recorded_plane(jb, line);
}
#endif
