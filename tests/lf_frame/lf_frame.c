/*
 * Whole-frame loop-filter order: FFmpeg's own ff_vp9_loopfilter_sb, superblock by superblock
 * in raster order as the decoder calls it, once with FFmpeg's C loop filters and once with
 * daedalus (executed by daedalus_flush), on the same frame and the same random filter levels
 * and edge masks: either FFmpeg's ff_vp9_loopfilter_sb with daedalus' deferred per-edge
 * functions in its table, or daedalus_vp9_loopfilter_sb in its place (one call per
 * superblock), or the decoder's hook of daedalus' provider (one call per superblock, placed by
 * position as in a decode). Built and run by tests/lf_frame.rs against the C oracle.
 *
 * usage: lf_frame WIDTH HEIGHT CHROMA (420, 422, 440 or 444) REGISTER (1: registered memory,
 *        0: copied) FLUSH (row: after each superblock row, frame: once) SEED
 *        WAY (edges: FFmpeg's walk with daedalus' functions, sb: daedalus_vp9_loopfilter_sb,
 *        decoder: the provider's loopfilter_sb, with some superblocks' columns edges sparse)
 * prints "changed=N differ=D calls=M" (N: pixels FFmpeg's filters changed, D: pixels where the
 * two results differ, M: loop-filter calls) and daedalus' counters, and exits 0 when both
 * frames are equal.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libavcodec/vp9dec.h"
#include "daedalus.h"

static uint64_t state;

static uint32_t next(void)
{
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* Smooth content with small steps, so that every filter width takes its flat paths too. */
static void fill(uint8_t *p, int w, int h, ptrdiff_t ls)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int base = 128 + ((x / 8 + y / 8) % 5) * 12 - 24;
            p[y * ls + x] = av_clip_uint8(base + (int)(next() % 5) - 2);
        }
}

/* sparse: some superblocks take edges in only some mask columns, the same in every row, so
   that their columns passes have gaps to split at (DAEDALUS_LF_ORDER=split); and most keep
   subsampled chroma's 16-wide edges where the decoder puts them (every 16 pixels), the others
   reaching into the superblock to the right or below as the decoder's never do */
static void random_filter(VP9Filter *f, int sparse, int ss_h, int ss_v)
{
    for (int i = 0; i < 64; i++)
        f->level[i] = next() % 64;
    unsigned columns = sparse && next() % 4 != 0 ? next() & 0xff : 0xff;
    for (int plane = 0; plane < 2; plane++)
        for (int dir = 0; dir < 2; dir++)
            for (int row = 0; row < 8; row++) {
                /* each column takes at most one of 16/8/4, plus maybe the inner 4 */
                uint8_t m[4] = { 0 };
                for (int col = 0; col < 8; col++) {
                    if (dir == 0 && !(columns >> col & 1))
                        continue;
                    unsigned r = next() % 8;
                    if (r < 3)
                        m[r] |= 1 << col;
                    if (next() % 3 == 0)
                        m[3] |= 1 << col;
                }
                memcpy(f->mask[plane][dir][row], m, 4);
            }
    if (sparse && next() % 8 != 0) {
        for (int row = 0; row < 8; row++) {
            uint8_t *cols = f->mask[1][0][row], *rows = f->mask[1][1][row];
            if (ss_h) {
                cols[1] |= cols[0] & ~0x11;
                cols[0] &= 0x11;
            }
            if (ss_v && row % 4) {
                rows[1] |= rows[0];
                rows[0] = 0;
            }
        }
    }
}

struct lf_names {
    void (**entry)(uint8_t *, ptrdiff_t, int, int, int);
    void (*ours)(uint8_t *, ptrdiff_t, int, int, int);
};

static int calls;
/* 0: FFmpeg's walk with daedalus' per-edge functions, 1: daedalus_vp9_loopfilter_sb, 2: the
   decoder's hook of the provider (DAEDALUS_PATH=calls) */
static int whole_superblocks;

/* The provider's table as ffmpeg-patches/ffmpeg-5.1 defines it (FFVP9Provider, ABI 15), up to
   its superblock hook: this harness builds against FFmpeg's unpatched source, so an ABI change
   is checked here by hand. */
typedef struct {
    int abi_version;
    size_t dsp_size;
    void *(*attach)(VP9DSPContext *dsp, int bpp);
    void (*frame_begin)(void *ctx, const void *frame);
    void (*sync)(void *ctx, int reason, int plane, int x, int y, int w, int h);
    int (*backup_row)(void *ctx, uint8_t *const dst[3], const uint8_t *const src[3],
                      const size_t len[3]);
    void (*intra_edges)(void *ctx, int plane, int x, int y, int size, int edges);
    int (*frame_end)(void *ctx, const void *frame);
    void (*detach)(void *ctx);
    uint8_t *(*frame_alloc)(size_t size, void **opaque);
    void (*frame_free)(void *opaque, uint8_t *data);
    void (*await_rows)(void *ctx, const uint8_t *frame_data, int sb_row);
    int (*loopfilter_sb)(void *ctx, uint8_t *const dst[3], ptrdiff_t ls_y, ptrdiff_t ls_uv,
                         int ss_h, int ss_v, int row, int col, const uint8_t *level,
                         const uint8_t *mask, const uint8_t *mblim_lut, const uint8_t *lim_lut);
} Provider;
static const Provider *provider;

#define COUNTED(name)                                                                   \
    static void counted_##name(uint8_t *d, ptrdiff_t s, int e, int i, int h)            \
    {                                                                                   \
        calls++;                                                                        \
        daedalus_vp9_##name(d, s, e, i, h);                                             \
    }
COUNTED(loop_filter_h_4_8)
COUNTED(loop_filter_v_4_8)
COUNTED(loop_filter_h_8_8)
COUNTED(loop_filter_v_8_8)
COUNTED(loop_filter_h_16_8)
COUNTED(loop_filter_v_16_8)
COUNTED(loop_filter_h_16_16)
COUNTED(loop_filter_v_16_16)
COUNTED(loop_filter_h_44_16)
COUNTED(loop_filter_v_44_16)
COUNTED(loop_filter_h_48_16)
COUNTED(loop_filter_v_48_16)
COUNTED(loop_filter_h_84_16)
COUNTED(loop_filter_v_84_16)
COUNTED(loop_filter_h_88_16)
COUNTED(loop_filter_v_88_16)

static void use_daedalus(VP9DSPContext *dsp)
{
    dsp->loop_filter_8[0][0] = counted_loop_filter_h_4_8;
    dsp->loop_filter_8[0][1] = counted_loop_filter_v_4_8;
    dsp->loop_filter_8[1][0] = counted_loop_filter_h_8_8;
    dsp->loop_filter_8[1][1] = counted_loop_filter_v_8_8;
    dsp->loop_filter_8[2][0] = counted_loop_filter_h_16_8;
    dsp->loop_filter_8[2][1] = counted_loop_filter_v_16_8;
    dsp->loop_filter_16[0] = counted_loop_filter_h_16_16;
    dsp->loop_filter_16[1] = counted_loop_filter_v_16_16;
    dsp->loop_filter_mix2[0][0][0] = counted_loop_filter_h_44_16;
    dsp->loop_filter_mix2[0][0][1] = counted_loop_filter_v_44_16;
    dsp->loop_filter_mix2[0][1][0] = counted_loop_filter_h_48_16;
    dsp->loop_filter_mix2[0][1][1] = counted_loop_filter_v_48_16;
    dsp->loop_filter_mix2[1][0][0] = counted_loop_filter_h_84_16;
    dsp->loop_filter_mix2[1][0][1] = counted_loop_filter_v_84_16;
    dsp->loop_filter_mix2[1][1][0] = counted_loop_filter_h_88_16;
    dsp->loop_filter_mix2[1][1][1] = counted_loop_filter_v_88_16;
}

/* Filters the whole frame as decode_tiles does: SB rows, SBs left to right. */
static void filter_frame(AVCodecContext *avctx, VP9Context *s, VP9Filter *filters,
                         int sb_cols, int sb_rows, int flush_rows)
{
    AVFrame *f = s->s.frames[CUR_FRAME].tf.f;
    for (int sb_row = 0; sb_row < sb_rows; sb_row++) {
        ptrdiff_t yoff = sb_row * 64 * f->linesize[0];
        ptrdiff_t uvoff = sb_row * (64 >> s->ss_v) * f->linesize[1];
        for (int sb_col = 0; sb_col < sb_cols; sb_col++) {
            VP9Filter *lflvl = &filters[sb_row * sb_cols + sb_col];
            ptrdiff_t y = yoff + sb_col * 64, uv = uvoff + (sb_col * 64 >> s->ss_h);
            if (whole_superblocks == 2) {
                uint8_t *const planes[3] = { f->data[0] + y, f->data[1] + uv, f->data[2] + uv };
                calls++;
                /* declined (the CPU path): the decoder filters it with the DSP table, here
                   daedalus' per-edge functions */
                if (provider->loopfilter_sb(NULL, planes, f->linesize[0], f->linesize[1],
                                            s->ss_h, s->ss_v, sb_row * 8, sb_col * 8,
                                            lflvl->level, &lflvl->mask[0][0][0][0],
                                            s->filter_lut.mblim_lut,
                                            s->filter_lut.lim_lut) != 0)
                    ff_vp9_loopfilter_sb(avctx, lflvl, sb_row * 8, sb_col * 8, y, uv);
            } else if (whole_superblocks) {
                uint8_t *const planes[3] = { f->data[0] + y, f->data[1] + uv, f->data[2] + uv };
                calls++;
                if (daedalus_vp9_loopfilter_sb(planes, f->linesize[0], f->linesize[1], s->ss_h,
                                               s->ss_v, sb_row * 8, sb_col * 8, lflvl->level,
                                               &lflvl->mask[0][0][0][0],
                                               s->filter_lut.mblim_lut,
                                               s->filter_lut.lim_lut) != 0) {
                    fprintf(stderr, "daedalus_vp9_loopfilter_sb refused a superblock\n");
                    exit(2);
                }
            } else {
                ff_vp9_loopfilter_sb(avctx, lflvl, sb_row * 8, sb_col * 8, y, uv);
            }
        }
        if (flush_rows)
            daedalus_flush();
    }
    daedalus_flush();
}

int main(int argc, char **argv)
{
    if (argc != 8 && argc != 9) {
        fprintf(stderr, "usage: lf_frame WIDTH HEIGHT 420|422|440|444 REGISTER row|frame SEED "
                        "edges|sb|decoder [odd|shifted]\n");
        return 2;
    }
    int w = atoi(argv[1]), h = atoi(argv[2]), reg = atoi(argv[4]);
    int ss_h, ss_v;
    if (!strcmp(argv[3], "420"))
        ss_h = 1, ss_v = 1;
    else if (!strcmp(argv[3], "422"))
        ss_h = 1, ss_v = 0;
    else if (!strcmp(argv[3], "440"))
        ss_h = 0, ss_v = 1;
    else if (!strcmp(argv[3], "444"))
        ss_h = 0, ss_v = 0;
    else {
        fprintf(stderr, "unknown chroma format %s\n", argv[3]);
        return 2;
    }
    int flush_rows = !strcmp(argv[5], "row");
    /* rows that start off a word, so that the GPU cannot read them by words: "odd" strides
       and planes, or planes "shifted" by a pixel with strides on a word */
    int odd = argc > 8 && !strcmp(argv[8], "odd");
    int shift = argc > 8 && (odd || !strcmp(argv[8], "shifted"));
    state = strtoull(argv[6], NULL, 10);
    int sb_cols = (w + 63) / 64, sb_rows = (h + 63) / 64;

    AVCodecContext avctx = { 0 };
    VP9Context *s = av_mallocz(sizeof(*s));
    AVFrame *frame = av_frame_alloc();
    if (!s || !frame)
        return 2;
    avctx.priv_data = s;
    s->s.frames[CUR_FRAME].tf.f = frame;
    s->ss_h = ss_h;
    s->ss_v = ss_v;
    s->bytesperpixel = 1;
    for (int l = 0; l < 64; l++) {
        s->filter_lut.lim_lut[l] = 1 + next() % 63;
        s->filter_lut.mblim_lut[l] = 2 * (l + 2) + s->filter_lut.lim_lut[l];
    }

    /* planes covering whole superblocks, plus a margin above and left that stays untouched */
    size_t sizes[3];
    uint8_t *bufs[3], *refs[3], *orig[3];
    for (int p = 0; p < 3; p++) {
        int pw = sb_cols * 64 >> (p ? ss_h : 0), ph = sb_rows * 64 >> (p ? ss_v : 0);
        frame->linesize[p] = FFALIGN(pw + 32, 64) + odd;
        sizes[p] = frame->linesize[p] * (size_t)(ph + 16);
        bufs[p] = av_malloc(sizes[p]);
        refs[p] = av_malloc(sizes[p]);
        orig[p] = av_malloc(sizes[p]);
        if (!bufs[p] || !refs[p] || !orig[p])
            return 2;
        fill(bufs[p], frame->linesize[p], ph + 16, frame->linesize[p]);
        memcpy(refs[p], bufs[p], sizes[p]);
        memcpy(orig[p], bufs[p], sizes[p]);
    }
    VP9Filter *filters = av_malloc_array(sb_cols * sb_rows, sizeof(*filters));
    if (!filters)
        return 2;
    int decoder = !strcmp(argv[7], "decoder");
    for (int i = 0; i < sb_cols * sb_rows; i++)
        random_filter(&filters[i], decoder, ss_h, ss_v);

    /* FFmpeg's C loop filters */
    ff_vp9dsp_init(&s->dsp, 8, 0);
    for (int p = 0; p < 3; p++)
        frame->data[p] = refs[p] + 8 * frame->linesize[p] + 16 + shift;
    filter_frame(&avctx, s, filters, sb_cols, sb_rows, 0);

    /* daedalus' */
    use_daedalus(&s->dsp);
    whole_superblocks = decoder ? 2 : !strcmp(argv[7], "sb");
    if (decoder) {
        provider = daedalus_vp9_provider();
        if (!provider || provider->abi_version != 15 ||
            provider->dsp_size != sizeof(VP9DSPContext)) {
            fprintf(stderr, "no provider of ABI 15 for this VP9DSPContext (%d, %zu bytes)\n",
                    provider ? provider->abi_version : -1, provider ? provider->dsp_size : 0);
            return 2;
        }
    }
    for (int p = 0; p < 3; p++) {
        frame->data[p] = bufs[p] + 8 * frame->linesize[p] + 16 + shift;
        if (reg && daedalus_register_memory(bufs[p], sizes[p]) != 0) {
            fprintf(stderr, "registration failed\n");
            return 2;
        }
    }
    filter_frame(&avctx, s, filters, sb_cols, sb_rows, flush_rows);

    long changed = 0, differ = 0;
    for (int p = 0; p < 3; p++) {
        for (size_t i = 0; i < sizes[p]; i++) {
            changed += refs[p][i] != orig[p][i];
            differ += bufs[p][i] != refs[p][i];
        }
        if (reg)
            daedalus_unregister_memory(bufs[p]);
    }
    DaedalusStats st;
    daedalus_get_stats(&st);
    printf("changed=%ld differ=%ld calls=%d gpu_calls=%" PRIu64 " cpu_calls=%" PRIu64
           " submissions=%" PRIu64 " barriers=%" PRIu64 " max_levels=%" PRIu64
           " flushes_overlap=%" PRIu64 " flushes_full=%" PRIu64 " validation_messages=%" PRIu64
           " deferred_lf=%" PRIu64 " deferred_lf_sb=%" PRIu64 " device=\"%s\"\n",
           changed, differ, calls, st.gpu_calls, st.cpu_calls, st.submissions, st.barriers,
           st.max_levels, st.flushes_overlap, st.flushes_full, st.validation_messages,
           st.deferred_lf, st.deferred_lf_sb, daedalus_device_name());
    return differ != 0;
}
