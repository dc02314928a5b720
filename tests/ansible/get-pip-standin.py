"""Stands in for the get-pip.py that ansible-test bootstraps its sanity venvs with.

ansible-test creates each sanity test's venv without pip, then downloads get-pip.py from
ci-files.testing.ansible.com (ansible_test/_util/target/setup/requirements.py, `bootstrap`) and
runs it with the pip version it wants; it uses a copy in ~/.ansible/test/cache/get_pip_X_Y.py
instead when one is there. That host is not a package registry and is not reachable from CI, so
run.sh puts this file there: it installs the venv's own bundled pip (ensurepip) and then the
requested pip from PyPI, through pip. ansible-test passes get-pip's options: --no-setuptools and
--no-wheel are get-pip's own (ensurepip installs neither), the rest are pip's.
"""

import subprocess
import sys

GET_PIP_ONLY = ("--no-setuptools", "--no-wheel")

args = [a for a in sys.argv[1:] if a not in GET_PIP_ONLY]
subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"], stdout=subprocess.DEVNULL)
subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", *args])
