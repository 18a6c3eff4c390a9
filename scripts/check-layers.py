#!/usr/bin/env python3
"""The layer table (layers.txt) made real.

  check-layers.py [SRCROOT]                  report every include that points up or sideways
  check-layers.py --farm OUTDIR [SRCROOT]    build the include directories the build uses

An include of a module's header names the module ("pds/pdc.hpp"). A file of module M may
include M's own headers and those of the modules below M in layers.txt, nothing else. Files
outside every module (tests, apps, benchmarks, examples) may include any module, but must
still name it.

--farm makes OUTDIR/<module>/ for each module: a symbolic link per module M may include, named
after it and pointing at its directory, so that a library compiled with -I OUTDIR/<module> cannot
find the header of a higher layer. OUTDIR/all/ holds every module.

Exit status: 0 clean, 1 when an include breaks the rules (each printed as file:line: why).
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = ('.cpp', '.hpp', '.h', '.def')
UNLAYERED = ('apps', 'bench', 'examples', 'test')


def read_layers(root):
    modules = {}  # name -> (directory, direct lower modules)
    with open(os.path.join(root, 'layers.txt')) as f:
        for n, line in enumerate(f, 1):
            words = line.split('#', 1)[0].split()
            if not words:
                continue
            if len(words) < 2:
                sys.exit(f'layers.txt:{n}: a module needs a directory')
            name, directory, below = words[0], words[1], words[2:]
            if name in modules:
                sys.exit(f'layers.txt:{n}: module {name} is listed twice')
            for b in below:
                if b not in modules:
                    sys.exit(f'layers.txt:{n}: {name} names {b}, which is not listed above it')
            modules[name] = (directory, below)
    return modules


def reachable(modules):
    """Each module's own name and everything below it."""
    closure = {}
    for name, (_, below) in modules.items():  # listed bottom-up, so lower ones are done
        seen = {name}
        for b in below:
            seen |= closure[b]
        closure[name] = seen
    return closure


def make_farm(root, modules, out):
    closure = reachable(modules)
    for target, allowed in list(closure.items()) + [('all', set(modules))]:
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        for entry in os.listdir(d):
            if entry not in allowed:
                os.remove(os.path.join(d, entry))
        for m in allowed:
            link = os.path.join(d, m)
            src = os.path.join(os.path.abspath(root), modules[m][0])
            if os.path.islink(link) and os.readlink(link) == src:
                continue
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(src, link)


def check(root, modules):
    closure = reachable(modules)
    owner = {os.path.normpath(d): name for name, (d, _) in modules.items()}
    headers = {}  # bare file name -> module, to say which module a bare include meant
    for name, (d, _) in modules.items():
        for f in os.listdir(os.path.join(root, d)):
            if f.endswith(SOURCES):
                headers.setdefault(f, name)
    faults = []
    dirs = [d for d, _ in modules.values()] + list(UNLAYERED)
    for top in dirs:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            rel_dir = os.path.relpath(dirpath, root)
            me = owner.get(os.path.normpath(rel_dir))
            if me is None and not rel_dir.startswith(UNLAYERED):
                continue  # a module's subdirectory is checked with the module
            for f in sorted(files):
                if not f.endswith(SOURCES):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, errors='replace') as src:
                    for n, line in enumerate(src, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        first = inc.split('/', 1)[0] if '/' in inc else None
                        where = f'{os.path.relpath(path, root)}:{n}'
                        if first in modules:
                            if me is not None and first not in closure[me]:
                                faults.append(f'{where}: {me} includes "{inc}", but {first} is '
                                              f'not below {me} in layers.txt')
                        elif first is None and inc in headers and (
                                me is not None or not os.path.exists(os.path.join(dirpath, inc))):
                            faults.append(f'{where}: "{inc}" must name its module '
                                          f'("{headers[inc]}/{inc}")')
    return faults


def main(argv):
    if argv[:1] == ['--farm']:
        if len(argv) < 2:
            sys.exit('usage: check-layers.py --farm OUTDIR [SRCROOT]')
        root = argv[2] if len(argv) > 2 else '.'
        make_farm(root, read_layers(root), argv[1])
        return 0
    root = argv[0] if argv else os.path.join(os.path.dirname(__file__), '..')
    modules = read_layers(root)
    faults = check(root, modules)
    for fault in faults:
        print(fault)
    if faults:
        print(f'check-layers: {len(faults)} include(s) break the layers of layers.txt')
        return 1
    print(f'check-layers: {len(modules)} modules, every include points down')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
