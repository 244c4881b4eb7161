// trnsim train: one training step of a model (configs/models) on a server / cluster platform under a data / tensor
// / pipeline parallelism plan; reports step time, tokens/s, MFU and where the time goes (docs/training.md).
#pragma once
#include "apps/args.h"

namespace trnsim::app {

extern const char* TRAIN_USAGE;
extern const option_set TRAIN_OPTIONS;
// Throws usage_error for bad input (the caller exits 2).
int cmd_train(const args& a);

}  // namespace trnsim::app
