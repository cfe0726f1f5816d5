#!/usr/bin/env python3
"""public_methods.py on made-up headers: it fails a class over the limit,
passes it when its header says why with the right count, fails it again
when the count no longer matches, and does not count what is not a public
method (constructors, private methods, nested types, data, inline bodies)."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def header(n_methods, why=""):
    methods = "\n".join(
        "  int M%d(int a) const;" % i for i in range(n_methods - 1))
    return """%s
#include <string>
class Big final : public Base {
 public:
  explicit Big(int x) : x_(x) {}
  ~Big();
  Big& operator=(const Big&) = delete;
  struct Nested { int f(); int g(); };
  enum class Kind { kA, kB };
  using Fn = int (*)(int);
  static constexpr int kLimit = 3;
  int Inline() { return x_ + (x_ > 0 ? 1 : 2); }
%s
 private:
  int Hidden();
  int x_;
};
""" % (why, methods)


def run(text):
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "lib"))
        with open(os.path.join(root, "lib", "big.h"), "w") as f:
            f.write(text)
        p = subprocess.run(
            [sys.executable, os.path.join(HERE, "public_methods.py"), root,
             "lib"], capture_output=True, text=True)
        return p.returncode, p.stdout


def main():
    failures = []
    code, out = run(header(15))
    if code != 0:
        failures.append("15 methods failed: " + out)
    code, out = run(header(16))
    if code != 1 or "Big has 16 public methods" not in out:
        failures.append("16 methods passed: " + out)
    code, out = run(header(16, "// Big has 16 public methods: one per rpc."))
    if code != 0 or "says why" not in out:
        failures.append("16 methods with a reason failed: " + out)
    code, out = run(header(17, "// Big has 16 public methods: one per rpc."))
    if code != 1:
        failures.append("a stale reason (16 said, 17 there) passed: " + out)
    for f in failures:
        print("FAIL:", f)
    print("public_methods selftest: %d of 4 cases right" % (4 - len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
