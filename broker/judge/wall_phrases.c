/* One index over the phrase tables. Families never share a table entry and
 * the classifier takes the first match per family, so the tables' order
 * between files does not matter; within a family it does (first = reported). */
#include "broker/judge/wall_phrases.h"

size_t vf_wall_phrase_count(void)
{
    return vf_n_wall_phrases_refusals + vf_n_wall_phrases_gates;
}

const vf_wall_phrase *vf_wall_phrase_at(size_t i)
{
    if (i < vf_n_wall_phrases_refusals)
        return &vf_wall_phrases_refusals[i];
    return &vf_wall_phrases_gates[i - vf_n_wall_phrases_refusals];
}
