#include "common/man_page.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace qkov {

std::string RoffText(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  return out;
}

absl::StatusOr<std::string> RenderManPage(const ManPage& page,
                                          const char* version) {
  // The program's flags: those of its main file, which HelpListsFlagsOf
  // names after the program.
  std::map<std::string, absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->Filename() == page.program && !flag->IsRetired())
      flags[std::string(name)] = flag;
  }
  std::set<std::string> grouped;
  for (const ManPage::Group& g : page.groups) {
    for (const std::string& f : g.flags) {
      if (flags.count(f) == 0) {
        return absl::InternalError(
            absl::StrCat(page.program, " --man_page: group '", g.title,
                         "' lists --", f, ", which the program does not have"));
      }
      grouped.insert(f);
    }
  }
  for (const auto& [name, flag] : flags) {
    if (grouped.count(name) == 0) {
      return absl::InternalError(
          absl::StrCat(page.program, " --man_page: --", name,
                       " is in no group of the manual page"));
    }
  }
  std::string out = absl::StrCat(
      ".\\\" ", page.program, "(1), written by `", page.program,
      " --man_page` from its flags (common/man_page.h).\n", ".TH ",
      page.program, " 1 \"\" \"", page.program, " ", version,
      "\" \"qkov-sweep\"\n", ".ad l\n", ".SH NAME\n", RoffText(page.program),
      " \\- ", RoffText(page.summary), "\n", ".SH SYNOPSIS\n", page.synopsis,
      "\n", ".SH DESCRIPTION\n", page.description, "\n", ".SH OPTIONS\n");
  for (const ManPage::Group& g : page.groups) {
    absl::StrAppend(&out, ".SS ", RoffText(g.title), "\n");
    if (!g.intro.empty()) absl::StrAppend(&out, g.intro, "\n");
    for (const std::string& name : g.flags) {
      const absl::CommandLineFlag* f = flags[name];
      const std::string value = f->DefaultValue();
      absl::StrAppend(&out, ".TP\n.B \\-\\-", RoffText(name), "\n",
                      RoffText(f->Help()));
      if (value == "true" || value == "false") {
        absl::StrAppend(&out, " (default: ", value, ")");
      } else if (!value.empty()) {
        absl::StrAppend(&out, " (default: ", RoffText(value), ")");
      }
      absl::StrAppend(&out, ".\n");
    }
  }
  absl::StrAppend(
      &out, ".SS General\n", ".TP\n.B \\-\\-help\n",
      "The flags above, one line each.\n", ".TP\n.B \\-\\-version\n",
      "The code version, as every result's provenance records "
      "it.\n",
      ".TP\n.B \\-\\-man_page\n", "This manual page's source (man(7)).\n");
  for (const ManPage::Section& s : page.sections)
    absl::StrAppend(&out, ".SH ", s.title, "\n", s.roff, "\n");
  return out;
}

void PrintManPageIfAsked(int argc, char** argv, const ManPage& page,
                         const char* version) {
  bool asked = false;
  for (int i = 1; i < argc; ++i)
    asked = asked || std::strcmp(argv[i], "--man_page") == 0;
  if (!asked) return;
  absl::StatusOr<std::string> text = RenderManPage(page, version);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", std::string(text.status().message()).c_str());
    std::exit(1);
  }
  std::fwrite(text->data(), 1, text->size(), stdout);
  std::exit(0);
}

}  // namespace qkov
