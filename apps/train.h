// trnsim train: one training step of a model (configs/models) on a server / cluster platform under a data / tensor
// / pipeline parallelism plan; reports step time, tokens/s, MFU and where the time goes (docs/training.md).
#pragma once

namespace trnsim::app {

extern const char* TRAIN_USAGE;
// argv[1] == "train". Throws usage_error for bad input (the caller exits 2).
int cmd_train(int argc, char** argv);

}  // namespace trnsim::app
