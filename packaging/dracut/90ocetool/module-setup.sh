#!/bin/bash
# dracut module (installed as /usr/lib/dracut/modules.d/90ocetool/module-setup.sh), the
# counterpart of the initramfs-tools hook /usr/share/initramfs-tools/hooks/ocetool: puts ocetool's
# boot hook and the modprobe.d line that runs it into the initramfs and, when
# /etc/ocetool/ocetool.toml exists and `ocetool apply` accepts it, ocetool, the configuration and
# the images it names, so that the profile is set before be2net binds wherever be2net loads.
# /usr/lib/ocetool/initramfs-files decides what goes in (its header has the rules) and writes the
# manifest the hook and ocetool-apply.service read after boot.
# Rebuild after editing the configuration or an image: dracut -f (or dracut --regenerate-all -f).

# Included whenever dracut builds an image: the modprobe.d line runs the hook whenever be2net
# loads, configured or not.
check() {
    return 0
}

depends() {
    return 0
}

installkernel() {
    # The VFIO backend on a host with an IOMMU (the sysfs backend needs no module).
    hostonly='' instmods vfio-pci
}

install() {
    local stage image
    inst_simple /usr/lib/ocetool/be2net-hook
    # The install line loads be2net with /sbin/modprobe once the hook is done.
    inst_multiple modprobe
    inst_multiple -o /lib/modprobe.d/ocetool.conf /usr/lib/modprobe.d/ocetool.conf
    stage=$(mktemp -d) || return 1
    /usr/lib/ocetool/initramfs-files "$stage"
    inst_simple "$stage/manifest" /usr/lib/ocetool/initramfs-manifest
    if [[ -f $stage/ocetool.toml ]]; then
        inst_simple "$stage/ocetool.toml" /etc/ocetool/ocetool.toml
        while IFS= read -r image; do
            inst "$image"
        done <"$stage/images"
        inst_multiple /usr/bin/ocetool timeout flock mktemp sed head tail tr cp mv rm chmod mkdir sleep
    fi
    rm -rf "$stage"
}
