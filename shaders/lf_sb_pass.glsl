// One line of a superblock loop-filter pass (src/kernels/lf_sb.rs), shared by lf_sb.comp (a
// workgroup per pass) and lf_row.comp (a workgroup walking a superblock row's passes). The
// includer declares `coefs` and `px`. Invocation `line` filters line `line` of the superblock
// (a row for the columns pass, a column for the rows pass), edge after edge in FFmpeg's order
// as the pass's table lists them for the line's 8-line segment. Lines are independent: each
// reads and writes only its own pixels. A line is read once, filtered edge after edge in the
// invocation's own memory, and what changed is written back once: one round trip to the
// frame's memory (host memory where it is imported) instead of one per edge.
//
// Job (uvec4): x = byte offset in `px` of the superblock's first pixel, y = stride (signed),
// z = direction (0: columns pass, 1: rows pass), w = first coefficient of the table in `coefs`
// (16 edge words per segment, two 16-bit halves each, low first; a word without width ends
// the segment's list).

#include "lf_filter.glsl"

const uint EDGES = 16u;
// A line's pixels across: 8 before the superblock to 8 after it. Read into registers (or the
// invocation's local memory) with a fixed loop, so that the reads go out together. Indexed at
// run time, the array lives in private memory: on V3D that is scratch memory behind the TMU,
// as shared memory is there too, so shared memory would not be faster.
const int SPAN = 80;

// The pass's table (16 edge words for each of the 8 segments), loaded by the whole workgroup
// at once: each invocation loads two words, so the table costs one round trip to the job data
// (host memory where it is uploaded) instead of one per edge and line.
shared uint table[EDGES * 8u];

uint edge_word(uint words, uint k)
{
    uint lo = uint(int(coefs[words + 2u * k])) & 0xffffu;
    uint hi = uint(int(coefs[words + 2u * k + 1u])) & 0xffffu;
    return lo | (hi << 16);
}

int reach_of(uint word)
{
    return ((word >> 6) & 3u) == 3u ? 8 : 4;
}

// Every invocation of the workgroup calls it for the same job, then a barrier() follows
// before `table` is read.
void load_table(uvec4 jb, int line)
{
    table[2 * line] = edge_word(jb.w, uint(2 * line));
    table[2 * line + 1] = edge_word(jb.w, uint(2 * line + 1));
}

// Filters line `line` of the pass `jb` whose table is loaded.
void filter_line(uvec4 jb, int line)
{
    bool columns = (jb.z & 1u) == 0u;
    int stride = int(jb.y);
    int across = columns ? 1 : stride;
    uint first = jb.x + uint(line * (columns ? stride : 1));
    uint words = uint(line / 8) * EDGES;

    // The pixels this line's edges reach: read once.
    int lo = 64, hi = 0;
    uint edges = 0u;
    for (; edges < EDGES; edges++) {
        uint word = table[words + edges];
        if (((word >> 6) & 3u) == 0u)
            break;
        int pos = int(word & 63u);
        lo = min(lo, pos - reach_of(word));
        hi = max(hi, pos + reach_of(word));
    }
    if (edges == 0u)
        return;
    int buf[SPAN]; // buf[i + 8]: pixel i across
    for (int b = 0; b < SPAN; b++)
        buf[b] = b - 8 >= lo && b - 8 < hi ? int(px[first + uint((b - 8) * across)]) : 0;

    // What the edges changed: written back once.
    int changed_lo = hi, changed_hi = lo;
    for (uint k = 0u; k < edges; k++) {
        uint word = table[words + k];
        int wd = ((word >> 6) & 3u) == 1u ? 4 : (((word >> 6) & 3u) == 2u ? 8 : 16);
        int pos = int(word & 63u);
        int v[16];
        for (int j = 0; j < 16; j++)
            v[j] = buf[pos + j];
        ivec2 r = filter_values(v, wd, int((word >> 8) & 0xffu), int((word >> 16) & 0xffu),
                                int(word >> 24));
        for (int j = r.x; j < r.y; j++)
            buf[pos + j] = v[j];
        if (r.y > r.x) {
            changed_lo = min(changed_lo, pos - 8 + r.x);
            changed_hi = max(changed_hi, pos - 8 + r.y);
        }
    }
    for (int b = 0; b < SPAN; b++)
        if (b - 8 >= changed_lo && b - 8 < changed_hi)
            px[first + uint((b - 8) * across)] = uint8_t(buf[b]);
}
