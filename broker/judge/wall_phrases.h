/* The built-in wording of walls, per family and language (en, de, fr, es,
 * it, pt, nl, pl, ja, zh). Phrases are written naturally; the classifier
 * folds them (text_fold.h) before use, like the page text. */
#ifndef VERIFETCH_WALL_PHRASES_H
#define VERIFETCH_WALL_PHRASES_H

#include <stddef.h>

#include "broker/judge/wall.h"

typedef enum {
    VF_CUE_TITLE_STRONG, /* a title (segment) only walls carry: "Just a moment…" */
    VF_CUE_TITLE,        /* a generic title that needs support: "Access denied", "Sign in" */
    VF_CUE_TEXT,         /* a sentence walls say and articles rarely do */
    VF_CUE_WEAK,         /* a call to action or banner phrase: counts only with other evidence */
} vf_cue_kind;

typedef struct {
    vf_wall wall;
    vf_cue_kind kind;
    const char *lang;
    const char *phrase;
} vf_wall_phrase;

/* All built-in phrases, index 0 .. vf_wall_phrase_count() - 1. */
size_t vf_wall_phrase_count(void);
const vf_wall_phrase *vf_wall_phrase_at(size_t i);

/* The tables behind the index, one file each (wall_phrases_*.c). */
extern const vf_wall_phrase vf_wall_phrases_refusals[];
extern const size_t vf_n_wall_phrases_refusals;
extern const vf_wall_phrase vf_wall_phrases_gates[];
extern const size_t vf_n_wall_phrases_gates;

#endif
