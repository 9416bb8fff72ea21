/* emulator/core/config_impl.h — what config.c shares with config_text.c. */
#ifndef EMULATOR_CONFIG_IMPL_H
#define EMULATOR_CONFIG_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* The index of u among d's words (SampleInterval's auto and off), or -1. */
int config_word_of(const struct attr_def *d, uint64_t u);
/* d's allowed range as the error lines and the listing give it. */
void config_range_text(const struct attr_def *d, char *buf, size_t len);

#endif
