"""Builds the `tessera` Python package: CMake builds the extension tessera._tessera and
libtessera.so; the wheel holds tessera/*.py, the extension and libtessera.so.0 beside it (the
extension's RUNPATH is set to $ORIGIN, so the installed package needs no build tree).

    python3 -m venv --system-site-packages /tmp/v
    /tmp/v/bin/pip install --no-build-isolation --no-index .

Environment:
  TESSERA_BUILD_DIR   an existing, configured CMake build tree (e.g. build/): only its
                      `_tessera` target is brought up to date and copied (no configure).
                      Its Python must be the one running pip (same extension suffix).
  TESSERA_CMAKE_ARGS  extra arguments for the CMake configure step (split like a shell would).
  CMAKE_BUILD_PARALLEL_LEVEL  build jobs (default: the CPU count).
Otherwise the build tree is build-pip/ beside this file (kept, so a second install only
relinks what changed). ccache, when installed, is the compiler launcher (the top-level
CMakeLists.txt sets it) with CCACHE_BASEDIR at this directory; build-pip/ sits at the same depth
as build/, so objects already compiled for build/ are reused.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
PIP_BUILD_DIR = os.path.join(ROOT, "build-pip")


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        m = re.search(r"project\(\s*Tessera\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("setup.py: no `project(Tessera VERSION x.y.z)` in CMakeLists.txt")
    return m.group(1)


def base_python():
    """The interpreter the extension is built for: the one running this, seen through a venv."""
    return getattr(sys, "_base_executable", None) or sys.executable


def run(cmd, **kw):
    print("setup.py: " + " ".join(shlex.quote(str(c)) for c in cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def cached_value(build_dir, name):
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


# Sets the RUNPATH of the copied extension (CMake's own ELF editor: no patchelf needed).
RPATH_SCRIPT = 'file(RPATH_SET FILE "${ELF}" NEW_RPATH "$ORIGIN")\n'


class CleanBuild(build):
    """build, starting from an empty build/lib: build-pip/ is kept between runs, and a module
    deleted from python/tessera must not reach the next wheel from a stale copy."""

    def run(self):
        shutil.rmtree(self.build_lib, ignore_errors=True)
        super().run()


class CMakeBuildExt(build_ext):
    """build_ext for the one CMake-built extension."""

    def build_extension(self, ext):
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        env = dict(os.environ)
        env.setdefault("CCACHE_BASEDIR", ROOT)
        jobs = env.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)

        build_dir = os.environ.get("TESSERA_BUILD_DIR")
        if build_dir:
            build_dir = os.path.abspath(build_dir)
            if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
                raise RuntimeError(f"setup.py: TESSERA_BUILD_DIR={build_dir} is not a configured "
                                   "CMake build tree (no CMakeCache.txt); unset it to let "
                                   "setup.py configure build-pip/")
        else:
            build_dir = PIP_BUILD_DIR
            self.configure(build_dir, env)
        run(["cmake", "--build", build_dir, "--target", "_tessera", "-j", jobs], env=env)

        module = os.path.join(build_dir, "python", "tessera", "_tessera" + suffix)
        library = os.path.join(build_dir, "libtessera.so.0")
        if not os.path.isfile(module):
            built = cached_value(build_dir, "Python3_EXECUTABLE")
            raise RuntimeError(f"setup.py: {module} was not built: the build tree's Python is "
                               f"{built}, but this is {sys.executable} (extension suffix "
                               f"{suffix}); unset TESSERA_BUILD_DIR or point it at a tree "
                               "configured with -DPython3_EXECUTABLE=<this python>")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        # Copies, not links: a wheel holds plain files (libtessera.so.0 is the SONAME the
        # extension asks for; the unversioned link is only for linking against it).
        shutil.copy(module, dest)
        shutil.copy(library, os.path.join(os.path.dirname(dest), "libtessera.so.0"))
        script = os.path.join(build_dir, "tessera_set_rpath.cmake")
        with open(script, "w") as f:
            f.write(RPATH_SCRIPT)
        run(["cmake", f"-DELF={dest}", "-P", script])

    def configure(self, build_dir, env):
        python = base_python()
        if cached_value(build_dir, "Python3_EXECUTABLE") not in (None, python):
            # Another interpreter configured this tree: start over (objects stay in ccache).
            shutil.rmtree(build_dir)
        if os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
            return  # configured; `cmake --build` re-runs CMake itself when a list file changed
        args = ["cmake", "-S", ROOT, "-B", build_dir, "--no-warn-unused-cli",
                "-DCMAKE_BUILD_TYPE=Release", "-DTESSERA_BUILD_PYTHON=ON",
                "-DTESSERA_BUILD_TESTS=OFF", "-DTESSERA_BUILD_BENCH=OFF",
                "-DTESSERA_BUILD_EXAMPLES=OFF", f"-DPython3_EXECUTABLE={python}"]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        args += shlex.split(os.environ.get("TESSERA_CMAKE_ARGS", ""))
        run(args, env=env)


# setuptools' own scratch space (build/lib..., the .egg-info) goes under build-pip/ too, not in
# build/ (the CMake tree of scripts/setup) or python/.
os.makedirs(os.path.join(PIP_BUILD_DIR, "setuptools"), exist_ok=True)

setup(
    version=project_version(),
    ext_modules=[Extension("tessera._tessera", sources=[])],
    cmdclass={"build": CleanBuild, "build_ext": CMakeBuildExt},
    options={
        "build": {"build_base": os.path.join(PIP_BUILD_DIR, "setuptools")},
        "egg_info": {"egg_base": os.path.join(PIP_BUILD_DIR, "setuptools")},
    },
)
