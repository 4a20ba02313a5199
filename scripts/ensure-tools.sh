#!/usr/bin/env bash
# Makes sure a fresh Debian machine has what nicsim needs, installing it when we may:
#   a JDK (javac and the JNI headers SpinalSim compiles against), and, when RTL is needed,
#   Verilator with g++ and make. Mill itself is fetched by ./mill.
# Usage: scripts/ensure-tools.sh [--rtl] [--node] [--rdma] [--vm] [--kernel]
#   --rtl   Verilator, g++ and make, to build and run the RTL blocks; Yosys, lcov, Z3 and Boolector for nicsim hw
#   --node  Node.js and npm, for the tests' timeline reader (scripts/timeline-reader)
#   --rdma  what an RDMA host has, so unmodified programs run on nicsim as they would there: Debian's
#           rdma-core 44 stack (libibverbs and its headers and gcc to build nicsim's provider, every
#           provider, librdmacm, ibverbs-utils, rdmacm-utils, infiniband-diags, srptools, python3-pyverbs with
#           rdma-core's tests), perftest, qperf, UCX's tools, Open MPI, fio, libfabric's tools, MPICH, dapl,
#           tgt and libiscsi-bin, ibacm, Ceph's monitor, OSD and clients
#   --vm    QEMU (qemu-system-x86 and qemu-system-arm, TCG: no /dev/kvm needed), a static busybox, cpio and socat,
#           to boot test guests whose kernel reaches the adapter through nicsim-qemu-remote (libnicsim/qemu)
#   --kernel  what building the kernel driver needs (./mill kernel.module): Debian's linux-headers for
#           the guest's kernel (its release in kernel/RELEASE), make and gcc, and linux-source for
#           the kernel's scripts/checkpatch.pl
# Exits 0 when everything is there; 2, after one line naming what is missing and how to install
# it, when it is not and cannot be installed here.
set -euo pipefail
need_rtl=0; need_node=0; need_rdma=0; need_vm=0; need_kernel=0
for a in "$@"; do
  case "$a" in
    --rtl) need_rtl=1 ;;
    --node) need_node=1 ;;
    --rdma) need_rdma=1 ;;
    --vm) need_vm=1 ;;
    --kernel) need_kernel=1 ;;
    *) echo "ensure-tools: unknown option '$a'; accepted: --rtl, --node, --rdma, --vm, --kernel" >&2; exit 2 ;;
  esac
done

missing=()
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v curl >/dev/null 2>&1 || command -v wget >/dev/null 2>&1 || missing+=(curl)
if [ "$need_rtl" = 1 ]; then
  command -v verilator >/dev/null 2>&1 || missing+=(verilator)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  command -v make >/dev/null 2>&1 || missing+=(make)
  command -v yosys >/dev/null 2>&1 || missing+=(yosys)
  command -v genhtml >/dev/null 2>&1 || missing+=(lcov) # hw coverage's HTML report
  # the SMT solvers of `nicsim hw prove` (yosys-smtbmc comes with yosys; the proofs use z3)
  command -v z3 >/dev/null 2>&1 || missing+=(z3)
  command -v boolector >/dev/null 2>&1 || missing+=(boolector)
fi
if [ "$need_rdma" = 1 ]; then
  [ -f /usr/include/infiniband/verbs.h ] || missing+=(libibverbs-dev)
  [ -f /usr/include/rdma/rdma_cma.h ] || missing+=(librdmacm-dev)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
  command -v rdma-ndd >/dev/null 2>&1 || missing+=(rdma-core)
  [ -d /etc/libibverbs.d ] || missing+=(ibverbs-providers)
  command -v ibv_devinfo >/dev/null 2>&1 || missing+=(ibverbs-utils)
  command -v rping >/dev/null 2>&1 || missing+=(rdmacm-utils)
  command -v ibstat >/dev/null 2>&1 || missing+=(infiniband-diags)
  command -v ibsrpdm >/dev/null 2>&1 || missing+=(srptools) # UmadTest: SRP discovery over umad
  [ -f /usr/share/doc/rdma-core/tests/run_tests.py ] || missing+=(python3-pyverbs)
  command -v ib_write_bw >/dev/null 2>&1 || missing+=(perftest)
  command -v qperf >/dev/null 2>&1 || missing+=(qperf)
  command -v ucx_info >/dev/null 2>&1 || missing+=(ucx-utils)
  command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
  command -v mpicc >/dev/null 2>&1 || missing+=(libopenmpi-dev)
  # more of Debian's verbs ecosystem that runs unchanged (docs/attach.md): fio's rdma engine, libfabric's
  # tools, MPICH over libfabric, dapl's dapltest, tgt's iSER target with libiscsi's initiator tools
  command -v fio >/dev/null 2>&1 || missing+=(fio)
  command -v fi_pingpong >/dev/null 2>&1 || missing+=(libfabric-bin)
  command -v mpiexec.mpich >/dev/null 2>&1 || missing+=(mpich)
  command -v dapltest >/dev/null 2>&1 || missing+=(dapl2-utils)
  command -v tgtd >/dev/null 2>&1 || missing+=(tgt)
  command -v iscsi-test-cu >/dev/null 2>&1 || missing+=(libiscsi-bin)
  # ibacm's address and route service; Ceph's async+rdma messenger (a monitor, a memstore OSD, rados)
  command -v ibacm >/dev/null 2>&1 || missing+=(ibacm)
  command -v ceph-mon >/dev/null 2>&1 || missing+=(ceph-mon)
  command -v ceph-osd >/dev/null 2>&1 || missing+=(ceph-osd)
  command -v rados >/dev/null 2>&1 || missing+=(ceph-common)
fi
if [ "$need_vm" = 1 ]; then
  command -v qemu-system-x86_64 >/dev/null 2>&1 || missing+=(qemu-system-x86)
  # QemuMigrationTest's Arm guest: the same RDMA migration in qemu-system-aarch64 (9 MB to download)
  command -v qemu-system-aarch64 >/dev/null 2>&1 || missing+=(qemu-system-arm)
  dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "ok installed" || missing+=(busybox-static)
  command -v cpio >/dev/null 2>&1 || missing+=(cpio)
  command -v cc >/dev/null 2>&1 || missing+=(gcc)
  # nicsim vm --forward-out: QEMU runs a socat per guest connection to an attached program
  command -v socat >/dev/null 2>&1 || missing+=(socat)
fi
if [ "$need_kernel" = 1 ]; then
  release=$(cat "$(dirname "$0")/../kernel/RELEASE")
  series=$(echo "$release" | cut -d. -f1,2) # 6.1.0-57-amd64 -> 6.1
  [ -f "/usr/src/linux-headers-$release/Makefile" ] || missing+=("linux-headers-$release")
  [ -f "/usr/src/linux-source-$series.tar.xz" ] || missing+=("linux-source-$series")
  command -v make >/dev/null 2>&1 || missing+=(make)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
fi
if [ "$need_node" = 1 ]; then
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
if [ "$need_vm" = 1 ]; then # ./nicsim vm indexes the guest's kernel modules with depmod
  [ -x /usr/sbin/depmod ] || [ -x /sbin/depmod ] || missing+=(kmod)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "nicsim: installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq >&2 && apt-get install -y -qq "${missing[@]}" >&2; then exit 0; fi
  echo "nicsim: missing ${missing[*]}, and apt-get could not install them (see above);" \
    "install them with: apt-get install -y ${missing[*]}" >&2
  exit 2
fi
echo "nicsim: missing ${missing[*]}; install them with: sudo apt-get install -y ${missing[*]}" >&2
exit 2
