#include "worker/data/dataset_files.h"

#include <algorithm>

namespace qkov::data {

// Sources (each folder's README in ../shared/data): HateXplain's splits from
// swiyasree/HateSpeechDetection @ 2a00e944, its split file and licence from
// hate-alert/HateXplain @ 01d74227; the Gulordava et al. subset from
// facebookresearch/colorlessgreenRNNs @ dbffbf0f; the numpred files from
// viking-sudo-rm/StackNN @ 9c242c69; GPT-2's files from OpenAI's model
// store; BERT's vocabulary from the Hugging Face hub.
const std::vector<DataFile>& DataFiles() {
  static const std::vector<DataFile> files = {
      {"hatexplain", "hatexplain/test.jsonl", 788436,
       "312193273bf29f02357c03a4f4145b192fc116931d521de98190748a48085c6b",
       "https://raw.githubusercontent.com/swiyasree/HateSpeechDetection/"
       "2a00e94445b4b3a248b8bb08e4f741d1c1aa1b54/data/raw/"
       "hatexplain_test.json"},
      {"hatexplain", "hatexplain/validation.jsonl", 790703,
       "6bb44c417973ffa5bc3e52629ec0abfaa8bd7f52e84cfde21f9963954a23d892",
       "https://raw.githubusercontent.com/swiyasree/HateSpeechDetection/"
       "2a00e94445b4b3a248b8bb08e4f741d1c1aa1b54/data/raw/"
       "hatexplain_validation.json"},
      {"hatexplain", "hatexplain/post_id_divisions.json", 591921,
       "c2fb0d89862e7897b11ea3e9380753f15a793482b4b70ad0532dfb1212212835",
       "https://raw.githubusercontent.com/hate-alert/HateXplain/"
       "01d742279dac941981f53806154481c0e15ee686/Data/post_id_divisions.json"},
      {"hatexplain", "hatexplain/LICENSE", 1070,
       "56fc351d0e8ebf939208f88cdb27e00833148b957b347a069f38ee88e5fc8db6",
       "https://raw.githubusercontent.com/hate-alert/HateXplain/"
       "01d742279dac941981f53806154481c0e15ee686/LICENSE"},
      {"hatexplain", "hatexplain/train-reconstructed.jsonl", 5036290,
       "8aef1db30e6b9092c429cdb91eb978d9a462305e9fe659fa840c68e1514f7578", ""},
      {"squad", "squad/dev-v1.1-all.json", 4853588,
       "73d2d21e47d63fd179e41581c33ea0dc0399b6655b9717249219287533e1613f", ""},
      {"squad", "squad/dev-v1.1-first5.json", 693948,
       "b70b4e0e1f137d5f5a433812d70835a515832a2913ef5773ad0ae9b2a5a3f355", ""},
      {"squad", "squad/LICENSE", 1228,
       "0489dd061ab967b178a97ab8c2cbc396e2b08c1318cbcb617d4b43705982a466", ""},
      {"sva", "sva/subj_agr_filtered.text", 1045625,
       "618f7583d6cc3942b2127e5ffb61603e0fd8b031628d574b10b9bc2930452be4",
       "https://raw.githubusercontent.com/facebookresearch/colorlessgreenRNNs/"
       "dbffbf0f2ef86c50bac204d7a2292862e1c6036f/data/linzen_testset/"
       "subj_agr_filtered.text"},
      {"sva", "sva/subj_agr_filtered.gold", 108320,
       "984be2eaf9f37812b1727ec165b2c9802fb71552684cc6a123daf96091118f5b",
       "https://raw.githubusercontent.com/facebookresearch/colorlessgreenRNNs/"
       "dbffbf0f2ef86c50bac204d7a2292862e1c6036f/data/linzen_testset/"
       "subj_agr_filtered.gold"},
      {"sva", "sva/subj_agr_filtered.eval", 17955,
       "c1d83149ce080c1c5db9d7ba8cbe3c11d6ca9618ce4cc8eb50c57e1934717903",
       "https://raw.githubusercontent.com/facebookresearch/colorlessgreenRNNs/"
       "dbffbf0f2ef86c50bac204d7a2292862e1c6036f/data/linzen_testset/"
       "subj_agr_filtered.eval"},
      {"sva", "sva/LICENSE-colorlessgreenRNNs", 19339,
       "50f03face87211373b7a447607f9ca26ad95ad339e8293ac2807958bad7b5447",
       "https://raw.githubusercontent.com/facebookresearch/colorlessgreenRNNs/"
       "dbffbf0f2ef86c50bac204d7a2292862e1c6036f/LICENSE"},
      {"sva", "sva/numpred.val", 679400,
       "430643ef15cacdcc2ff88afe44a87b9aeaa094c683653a54c2a936428d300245",
       "https://raw.githubusercontent.com/viking-sudo-rm/StackNN/"
       "9c242c69273ae5c7ae3b784dc6a76ec64e9b54dc/data/linzen/rnn_agr_simple/"
       "numpred.val"},
      {"sva", "sva/numpred.test.1.first10000", 516393,
       "7f63292b60cc529de3002b16dc939394d7da1cf8f76c2a7f78aa3516e23b4fe5", ""},
      {"sva", "sva/numpred.test.2", 605148,
       "23ad762fbacea0bb35c26dfcdcd72df52a87535cd3fa9dda2bacee44cb8b60c1",
       "https://raw.githubusercontent.com/viking-sudo-rm/StackNN/"
       "9c242c69273ae5c7ae3b784dc6a76ec64e9b54dc/data/linzen/rnn_agr_simple/"
       "numpred.test.2"},
      {"sva", "sva/numpred.test.3", 158273,
       "ce9755d6891b8dcb486a3242f7495fdd3881c93320c2d0d2fda4827a8489de55",
       "https://raw.githubusercontent.com/viking-sudo-rm/StackNN/"
       "9c242c69273ae5c7ae3b784dc6a76ec64e9b54dc/data/linzen/rnn_agr_simple/"
       "numpred.test.3"},
      {"sva", "sva/numpred.test.4", 49818,
       "c43e0511bb14904e41b8bfce8a76c84912aa42e61ef5428d7ab4c28197488411",
       "https://raw.githubusercontent.com/viking-sudo-rm/StackNN/"
       "9c242c69273ae5c7ae3b784dc6a76ec64e9b54dc/data/linzen/rnn_agr_simple/"
       "numpred.test.4"},
      {"sva", "sva/numpred.test.5", 16104,
       "f7b9922a0e581c4a9d45612eb249e4d314c7b21d4cf7c33c82c6731d9368d838",
       "https://raw.githubusercontent.com/viking-sudo-rm/StackNN/"
       "9c242c69273ae5c7ae3b784dc6a76ec64e9b54dc/data/linzen/rnn_agr_simple/"
       "numpred.test.5"},
      {"glove", "glove/glove.6B.100d.squad-first5.txt", 5042755,
       "947c1e053667afabaa540c3d30abbc8b04a4a5209fd4c79ded477b9af25c4aa0", ""},
      {"tokenizers", "tokenizers/bert-base-uncased/vocab.txt", 231508,
       "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
       "https://huggingface.co/bert-base-uncased/resolve/main/vocab.txt"},
      {"tokenizers", "tokenizers/bert-base-uncased/LICENSE", 11357,
       "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4", ""},
      {"tokenizers", "tokenizers/gpt2/encoder.json", 1042301,
       "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
       "https://openaipublic.blob.core.windows.net/gpt-2/models/124M/"
       "encoder.json"},
      {"tokenizers", "tokenizers/gpt2/vocab.bpe", 456318,
       "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
       "https://openaipublic.blob.core.windows.net/gpt-2/models/124M/"
       "vocab.bpe"},
      {"tokenizers", "tokenizers/gpt2/LICENSE", 1066,
       "55c21bb37e0f9dc0f33b5cb35991ab3951eb04799fb70bd7b7d807abcacc002e", ""},
      {"tokenizers", "tokenizers/testvectors/bert_base_uncased_wordpiece.jsonl",
       8705, "5792c8f74f39574a526a8e04cf6accdbe3951bfec35ab7611eb0a4b0a370f51d",
       ""},
      {"tokenizers", "tokenizers/testvectors/bert_base_uncased_real.jsonl",
       551265,
       "197232735931728a0325d50d2e2299f6a142542fe71f3da6e541d0fd507edfbd", ""},
      {"tokenizers", "tokenizers/testvectors/gpt2_bpe.jsonl", 5164,
       "da13ae3b430d58da2206e989640d8d7e491e9e2a713b7d0bcf9915945d1468de", ""},
      {"tokenizers", "tokenizers/testvectors/gpt2_real.jsonl", 323733,
       "7bcbdaf8534c5b4619da1b846fe5be8b0fcde8ae67215fe6344262f8013ad7c6", ""},
  };
  return files;
}

std::vector<std::string> DatasetNames() {
  std::vector<std::string> names;
  for (const DataFile& f : DataFiles()) {
    if (std::find(names.begin(), names.end(), f.dataset) == names.end())
      names.push_back(f.dataset);
  }
  return names;
}

}  // namespace qkov::data
