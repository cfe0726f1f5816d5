// Bounds a checkpoint's declared sizes by its real ones before LibTorch reads
// it. A checkpoint is a torch archive (a zip of stored or deflated entries
// holding pickles and tensor storages), and LibTorch 1.13's reader trusts
// what the bytes declare: it allocates an entry's declared uncompressed size
// before it extracts it, zero-fills a string to a pickle's declared length
// before it finds the pickle truncated, grows its memo table to a declared
// index, and gives a storage the byte size its pickle declares over a buffer
// as long as its entry. A damaged or hostile checkpoint therefore makes a
// worker touch gigabytes (and the kernel kill it, over and over as the trial
// moves between workers) or read past a buffer.
//
// LibTorch also compiles the TorchScript source in the archive's code/
// entries as it loads it, and its compiler crashes on some malformed
// declarations.
//
// CheckCheckpointBounds reads the archive as LibTorch will and refuses, with
// INVALID_ARGUMENT naming the entry and both sizes (or the line), any
// checkpoint in which
//   - the zip's end record, central directory or an entry's local header lies
//     outside the bytes, or two entries have one name;
//   - an entry is neither stored nor deflated, a stored entry's two sizes
//     differ, a deflated entry inflates to other than its declared size, or
//     an entry's CRC-32 is not its bytes' (not checked in the fuzz build);
//   - a code/ entry holds anything but the class declarations LibTorch's
//     writer makes (attribute and submodule annotations, parameter and
//     buffer name lists), or more than 1 MiB;
//   - a pickle (each entry ending in ".pkl" or ".debug_pkl") declares a
//     string longer than the bytes left, uses an opcode LibTorch's unpickler
//     does not read, or sets a memo index beyond the next one;
//   - a pickled storage reference names an entry that does not exist, or
//     declares more elements than that entry holds.
// It allocates in proportion to the checkpoint's own size. What it accepts
// can still be refused by LibTorch (a wrong type, a missing key): those are
// errors, not allocations, and the trainers turn them into INVALID_ARGUMENT.
#ifndef QKOV_WORKER_TRAINING_CHECKPOINT_BOUNDS_H_
#define QKOV_WORKER_TRAINING_CHECKPOINT_BOUNDS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace qkov::training {

absl::Status CheckCheckpointBounds(absl::string_view bytes);

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_CHECKPOINT_BOUNDS_H_
