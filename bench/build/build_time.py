#!/usr/bin/env python3
"""How long a user waits for the compiler: a clean build of the Sluice library, and a word-count job built against
the installed package, as a user outside this tree builds it (examples/out-of-tree, docs/install.md).

Prints one JSON object:
  library:    a clean Release build (no compiler cache) of the `sluice` target alone, then of the rest of
              `sluice_package`, everything `cmake --install` installs (the connectors, the CLI): together, what the
              first scripts/run-demo compiles
  word_count: examples/out-of-tree configured against that installed prefix, then its one source compiled and
              linked (the job of README.md's "Write your own job", with a file source and the exactly-once file sink)
Each step reports `wall_s` and `cpu_s` (user + system time of the build tool and the compilers it ran). On a busy
machine the wall time grows with the load; the CPU time is the figure to compare between runs.

Usage: bench/build/build_time.py [--jobs N] [--work DIR] [--keep] [--installed PREFIX]
The work folder (default: a new temporary one) holds the build and the prefix; it is removed unless --keep.
--installed PREFIX: only the word-count steps, against a package already installed there (`cmake --install`).
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def timed(cmd, env):
    """Runs cmd; returns wall and CPU seconds (this process's waited-for children: the tool and its compilers)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:])
        sys.exit(f'build_time: {" ".join(cmd)} failed with exit {done.returncode}')
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {'wall_s': round(wall, 1), 'cpu_s': round(cpu, 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--jobs', type=int, default=os.cpu_count() or 2)
    parser.add_argument('--work', default=None)
    parser.add_argument('--keep', action='store_true')
    parser.add_argument('--installed', default=None, help='an installed prefix: measure only the word count')
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix='sluice-build-time-')
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ)
    env['CCACHE_DISABLE'] = '1'  # a clean build means the compiler runs for every source
    for launcher in ('CMAKE_CXX_COMPILER_LAUNCHER', 'CMAKE_C_COMPILER_LAUNCHER'):
        env.pop(launcher, None)
    build, prefix, user = (os.path.join(work, d) for d in ('build', 'prefix', 'user'))
    try:
        library = installed = None
        if args.installed:
            prefix = os.path.abspath(args.installed)
        else:
            subprocess.run(['cmake', '-S', REPO, '-B', build, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release',
                            '-DSLUICE_BUILD_TESTS=OFF', '-DSLUICE_BUILD_BENCH=OFF', f'-DCMAKE_INSTALL_PREFIX={prefix}'],
                           env=env, check=True, stdout=subprocess.DEVNULL)
            library = timed(['cmake', '--build', build, '-j', str(args.jobs), '--target', 'sluice'], env)
            installed = timed(['cmake', '--build', build, '-j', str(args.jobs), '--target', 'sluice_package'], env)
            subprocess.run(['cmake', '--install', build], env=env, check=True, stdout=subprocess.DEVNULL)
        configure = timed(['cmake', '-S', os.path.join(REPO, 'examples', 'out-of-tree'), '-B', user, '-G', 'Ninja',
                           '-DCMAKE_BUILD_TYPE=Release', f'-DCMAKE_PREFIX_PATH={prefix}'], env)
        compile_job = timed(['cmake', '--build', user, '-j', str(args.jobs)], env)
        report = {
            'jobs': args.jobs,
            'cores': os.cpu_count(),
            'load_average_1m_at_end': round(os.getloadavg()[0], 2),
            'word_count': {'configure': configure, 'compile_and_link': compile_job},
        }
        if library is not None:
            report['library'] = {'sluice_target': library, 'rest_of_the_installed_package': installed}
        print(json.dumps(report, indent=2))
    finally:
        if not args.keep and not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
