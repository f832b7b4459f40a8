// The engine's entry points into LAME 3.100 (src/speech/audio/lame.ts calls them): one mono constant-bitrate encoder,
// Float32 samples in, MP3 frames out, with LAME's quality setting (lame_set_quality), which no build of LAME on npm
// exposes. Quality 7 skips noise shaping and the best-Huffman search and costs half the CPU of LAME's default (3).
#include <stdlib.h>
#include <lame/lame.h>

typedef struct {
  lame_global_flags *gfp;
  float *pcm;
  unsigned int pcm_capacity;
  unsigned char *out;
  unsigned int out_capacity;
} Encoder;

/* LAME's messages would go to stderr through WASI; the caller sees failures as return codes instead. */
static void quiet(const char *format, va_list args) { (void)format; (void)args; }

__attribute__((export_name("enc_free"))) void enc_free(Encoder *enc) {
  if (!enc) return;
  if (enc->gfp) lame_close(enc->gfp);
  free(enc->pcm);
  free(enc->out);
  free(enc);
}

/* Constant bitrate, mono. quality: LAME's 0 (best, slowest) to 9 (fastest). Returns 0 when LAME refuses. */
__attribute__((export_name("enc_init"))) Encoder *enc_init(int sample_rate, int kbps, int quality) {
  Encoder *enc = calloc(1, sizeof(Encoder));
  if (!enc) return 0;
  enc->gfp = lame_init();
  if (!enc->gfp) goto fail;
  lame_set_errorf(enc->gfp, quiet);
  lame_set_debugf(enc->gfp, quiet);
  lame_set_msgf(enc->gfp, quiet);
  lame_set_num_channels(enc->gfp, 1);
  lame_set_mode(enc->gfp, MONO);
  lame_set_in_samplerate(enc->gfp, sample_rate);
  lame_set_out_samplerate(enc->gfp, sample_rate);
  lame_set_VBR(enc->gfp, vbr_off);
  lame_set_brate(enc->gfp, kbps);
  lame_set_quality(enc->gfp, quality);
  /* ReplayGain analysis would cost a fifth more; the engine levels loudness itself. */
  lame_set_findReplayGain(enc->gfp, 0);
  lame_set_bWriteVbrTag(enc->gfp, 0);
  lame_set_write_id3tag_automatic(enc->gfp, 0);
  if (lame_init_params(enc->gfp) < 0) goto fail;
  return enc;
fail:
  enc_free(enc);
  return 0;
}

/* Room for n input samples; the caller writes them there and calls enc_encode(n). */
__attribute__((export_name("enc_input"))) float *enc_input(Encoder *enc, unsigned int n) {
  if (n > enc->pcm_capacity) {
    float *grown = realloc(enc->pcm, n * sizeof(float));
    if (!grown) return 0;
    enc->pcm = grown;
    enc->pcm_capacity = n;
  }
  return enc->pcm;
}

static int room(Encoder *enc, unsigned int n) {
  /* LAME's own worst case: 1.25 * samples + 7200 bytes. */
  unsigned int needed = n + n / 4 + 7200;
  if (needed > enc->out_capacity) {
    unsigned char *grown = realloc(enc->out, needed);
    if (!grown) return 0;
    enc->out = grown;
    enc->out_capacity = needed;
  }
  return 1;
}

__attribute__((export_name("enc_output"))) unsigned char *enc_output(Encoder *enc) { return enc->out; }

/* Encodes the n samples at enc_input(); returns the bytes written at enc_output(), or < 0 on an error. */
__attribute__((export_name("enc_encode"))) int enc_encode(Encoder *enc, unsigned int n) {
  if (!room(enc, n)) return -100;
  return lame_encode_buffer_ieee_float(enc->gfp, enc->pcm, enc->pcm, n, enc->out, enc->out_capacity);
}

__attribute__((export_name("enc_flush"))) int enc_flush(Encoder *enc) {
  if (!room(enc, 0)) return -100;
  return lame_encode_flush(enc->gfp, enc->out, enc->out_capacity);
}

/* Samples LAME puts before the first input sample. */
__attribute__((export_name("enc_delay"))) int enc_delay(Encoder *enc) { return lame_get_encoder_delay(enc->gfp); }
