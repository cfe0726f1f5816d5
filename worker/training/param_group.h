// Learning-rate groups: the QK group trains at lr_ratio x the OV rate
// (docs/paper.md §1); the MLP group (the text models' feed-forward layers
// and LayerNorms) at its own multiple of the OV rate, or not at all.
#ifndef QKOV_WORKER_TRAINING_PARAM_GROUP_H_
#define QKOV_WORKER_TRAINING_PARAM_GROUP_H_

namespace qkov::training {

enum class ParamGroup { kQk, kOv, kMlp };
inline constexpr int kNumParamGroups = 3;
const char* ParamGroupName(ParamGroup group);  // "qk", "ov", "mlp"

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_PARAM_GROUP_H_
