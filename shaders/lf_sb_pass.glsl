// One plane of a superblock's loop filter on the per-call path (src/kernels/lf_sb.rs), for
// lf_sb.comp (a workgroup per plane). The includer declares `coefs`, and the frame's pixels as
// `px` and `px_coherent` (the same bytes; the passes read and write them through
// `px_coherent`, since the rows pass reads what other invocations wrote in the columns pass),
// of type LF_PIXEL (8 bits unless it says otherwise; at 16, LF_BIT_DEPTH gives the depth and
// LF_WORD_PIXELS is 2: the pixels a word of `px_words` holds). Offsets and strides count
// pixels.
// The workgroup first walks the plane's edge masks (lf_sb_walk.glsl); then each pass
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
#include "lf_sb_walk.glsl"

#ifndef LF_PIXEL
#define LF_PIXEL uint8_t
#define LF_WORD_PIXELS 4
#endif
const int WORD_PIXELS = LF_WORD_PIXELS;
const uint PIXEL_BITS = 32u / uint(LF_WORD_PIXELS);
const uint PIXEL_MASK = (1u << PIXEL_BITS) - 1u;
// A superblock's row of 64 pixels in words.
const uint ROW_WORDS = 64u / uint(LF_WORD_PIXELS);

// A line's pixels across: 8 before the superblock to 8 after it. Read into registers (or the
// invocation's local memory) with a fixed loop, so that the reads go out together. Indexed at
// run time, the array lives in private memory: on V3D that is scratch memory behind the TMU,
// as shared memory is there too, so shared memory would not be faster.
const int SPAN = 80;

// Where the plane's rows start on a word, the rows pass's pixels are first read by the whole
// workgroup into `rows_tile`: its 80 rows (8 above the superblock to 8 below), ROW_WORDS words
// each, consecutive invocations reading consecutive words, a fourth (at 16 bits a half) of the
// accesses of reading a pixel at a time (on the H100, with frames in host memory, a fifth
// less GPU time for the loop filter).
const uint TILE_WORDS = 80u * ROW_WORDS;
shared uint rows_tile[TILE_WORDS];

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
}

// Filters the plane `jb` whose record is in `coefs` at jb.w: both passes, FFmpeg's columns
// pass first. Every invocation of the workgroup (64) calls it for the same job: the barriers
// are inside, in control flow that is uniform across the workgroup. A workgroup filters one
// plane (its columns pass reads the frame without the coherent view: nothing of the workgroup
// wrote there before it).
void filter_plane(uvec4 jb, int line)
{
    uint l = uint(line);
    uint lo = uint(int(coefs[jb.w + 2u * l])) & 0xffffu;
    uint hi = uint(int(coefs[jb.w + 2u * l + 1u])) & 0xffffu;
    record[l] = lo | (hi << 16);
    walk_edges(jb.z, l, false, 0u);
    // The same for every line. (Offsets count from the buffer's binding, at offset 0, where
    // the word view starts too.)
    bool tiled = ((jb.x | jb.y) & uint(WORD_PIXELS - 1)) == 0u;
    // Both passes read and write through `px_coherent`. (Chosen at run time from the job's
    // bits 4 and 5, always 0: with the choice known when compiled, NVIDIA's compiler made this
    // loop filter 4 % slower on the H200, docs/benchmarks-history.md.)
    bool both = (jb.z & 48u) == 0u;
    filter_line(jb, 0u, line, both, tiled);
    // The columns pass's writes before the rows pass reads them.
    memoryBarrierBuffer();
    barrier();
    if (tiled)
        load_rows_tile(jb, l, both);
    filter_line(jb, 1u, line, both, tiled);
}
