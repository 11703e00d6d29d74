# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# cluster_conf.sh -- what cluster.sh writes before a node starts: keys,
# the ssh client, corosync.conf, the seed CIB, the per-node OCF tree and
# directories (sourced by cluster.sh; its globals are cluster.sh's)

# cluster_addr -- print node $1's address
cluster_addr() {
	printf '198.18.0.%s\n' "${1#n}"
}

# cluster_keys -- DIR/ssh: the client's key and the nodes' host key (one
# for all, as for machines cloned from one image), kept from an earlier run
cluster_keys() {
	local sshdir=$CLUSTER_DIR/ssh keygen k
	keygen=$(harness_prog "${SSH_KEYGEN:-}" ssh-keygen) || return 1
	mkdir -p -- "$sshdir" && chmod 700 "$sshdir" || return 1
	for k in id_ed25519 host_ed25519_key; do
		[[ -s $sshdir/$k ]] && continue
		"$keygen" -q -t ed25519 -N '' -C "rpmem-cluster-$k" \
			-f "$sshdir/$k" || return 1
	done
}

# cluster_client -- DIR/ssh/ssh_config and the wrapper (harness.sh's),
# known_hosts with every node, node names, host keys not pinned
cluster_client() {
	local sshdir=$CLUSTER_DIR/ssh ssh key node
	ssh=$(harness_prog "${SSH:-}" ssh) || return 1
	HARNESS_ADDR=$(cluster_addr n1) harness_write_client "$CLUSTER_DIR" \
		22 "$ssh" || return 1
	key=$(cut -d' ' -f1,2 <"$sshdir/host_ed25519_key.pub") || return 1
	# port 22 is looked up as a bare name, not "[addr]:22"
	for node in "${CLUSTER_NODES[@]}"; do
		printf '%s,%s %s\n' "$node" "$(cluster_addr "$node")" "$key"
	done >"$sshdir/known_hosts" || return 1
	sed -i -e 's/^StrictHostKeyChecking yes$/StrictHostKeyChecking no/' \
		-e 's/^ConnectTimeout 10$/ConnectTimeout 3/' \
		"$sshdir/ssh_config" || return 1
	if ! grep -qx 'StrictHostKeyChecking no' "$sshdir/ssh_config" ||
			! grep -qx 'ConnectTimeout 3' "$sshdir/ssh_config"; then
		cluster_err "harness_write_client's ssh_config changed;" \
			"update cluster_client"
		return 1
	fi
	for node in "${CLUSTER_NODES[@]}"; do
		printf 'Host %s\n\tHostName %s\n' "$node" \
			"$(cluster_addr "$node")"
	done >>"$sshdir/ssh_config" || return 1
	: >>"$sshdir/ssh.calls"
	CLUSTER_SSH=$sshdir/ssh
	export CLUSTER_SSH
}

# cluster_corosync_conf -- print corosync.conf for this cluster
cluster_corosync_conf() {
	local node
	printf 'totem {\n\tversion: 2\n\tcluster_name: rpmem-test\n'
	printf '\ttransport: knet\n\tcrypto_cipher: aes256\n'
	printf '\tcrypto_hash: sha256\n\ttoken: %s\n' "${CLUSTER_TOKEN:-1000}"
	[[ -n ${CLUSTER_TOKEN_COEFFICIENT:-} ]] &&
		printf '\ttoken_coefficient: %s\n' "$CLUSTER_TOKEN_COEFFICIENT"
	printf '}\n'
	printf 'nodelist {\n'
	for node in "${CLUSTER_NODES[@]}"; do
		printf '\tnode {\n\t\tnodeid: %s\n\t\tname: %s\n' \
			"${node#n}" "$node"
		printf '\t\tring0_addr: %s\n\t}\n' "$(cluster_addr "$node")"
	done
	printf '}\nquorum {\n\tprovider: corosync_votequorum\n'
	((CLUSTER_N == 2)) && printf '\ttwo_node: 1\n'
	printf '}\nlogging {\n\tto_logfile: yes\n'
	printf '\tlogfile: /var/log/corosync/corosync.log\n'
	printf '\tto_syslog: no\n\tto_stderr: no\n\ttimestamp: hires\n}\n'
}

# cluster_option_args -- print the cluster options as "name value" lines
cluster_option_args() {
	echo stonith-enabled false
	if ((CLUSTER_N == 2)); then
		echo no-quorum-policy ignore
	else
		echo no-quorum-policy stop
	fi
	echo dc-deadtime 5s
}

# cluster_seed_cib -- DIR/cib-seed.xml: an empty CIB with the cluster
# options, so that the very first election already waits 5 s, not 20
cluster_seed_cib() {
	local seed=$CLUSTER_DIR/cib-seed.xml name value
	cibadmin --empty >"$seed" || return 1
	while read -r name value; do
		CIB_file=$seed crm_attribute --type crm_config --name "$name" \
			--update "$value" || return 1
	done < <(cluster_option_args)
}

# cluster_ocf_mounts -- print the mounts of a per-node OCF tree $1: the
# host's providers and the overlay's, the tree over /usr/lib/ocf
cluster_ocf_mounts() {
	local tree=$1 overlay=$CLUSTER_OVERLAY sub p
	for sub in resource.d lib; do
		for p in /usr/lib/ocf/"$sub"/*/; do
			p=${p%/}
			[[ -d $p ]] || continue
			mkdir -p "$tree/$sub/${p##*/}" || return 1
			echo "bind $p $tree/$sub/${p##*/}"
		done
		for p in "$overlay/$sub"/*/; do
			p=${p%/}
			[[ -d $p ]] || continue
			if [[ -e /usr/lib/ocf/$sub/${p##*/} ]]; then
				cluster_err "CLUSTER_OCF_OVERLAY:" \
					"$sub/${p##*/} is the host's own"
				return 1
			fi
			mkdir -p "$tree/$sub/${p##*/}" || return 1
			echo "bind $p $tree/$sub/${p##*/}"
		done
	done
	echo "rbind $tree /usr/lib/ocf"
}

# cluster_prepare -- node $1's directories, configs and lists (see the top)
cluster_prepare() {
	local node=$1 nd=$CLUSTER_DIR/$1 d line
	for d in etc/corosync var/lib/corosync var/log/corosync srv; do
		mkdir -p -- "$nd/$d" || return 1
	done
	for d in cib pengine blackbox cores; do
		mkdir -p -- "$nd/var/lib/pacemaker/$d" || return 1
		chown hacluster:haclient "$nd/var/lib/pacemaker/$d" &&
			chmod 750 "$nd/var/lib/pacemaker/$d" || return 1
	done
	mkdir -p -- "$nd/var/log/pacemaker/bundles" || return 1
	chown -R hacluster:haclient "$nd/var/log/pacemaker" &&
		chmod 770 "$nd/var/log/pacemaker" || return 1
	if [[ ! -e $nd/var/lib/pacemaker/cib/cib.xml ]]; then
		install -o hacluster -g haclient -m 600 \
			"$CLUSTER_DIR/cib-seed.xml" \
			"$nd/var/lib/pacemaker/cib/cib.xml" || return 1
	fi
	cluster_corosync_conf >"$nd/etc/corosync/corosync.conf" || return 1
	install -m 400 "$CLUSTER_DIR/authkey" "$nd/etc/corosync/authkey" ||
		return 1

	for d in etc/corosync var/lib/corosync var/log/corosync \
			var/lib/pacemaker var/log/pacemaker srv; do
		echo "bind $nd/$d /$d"
	done >"$nd/mounts" || return 1
	if [[ -n $CLUSTER_OVERLAY ]]; then
		cluster_ocf_mounts "$nd/ocf" >>"$nd/mounts" || return 1
	fi

	while IFS= read -r line; do
		[[ -z $line || $line == \#* ]] && continue
		if [[ ! $line =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then
			cluster_err "CLUSTER_NODE_ENV: not VAR=value: $line"
			return 1
		fi
		printf '%s\n' "$line"
	done <<<"${CLUSTER_NODE_ENV:-}" >"$nd/env" || return 1

	mkdir -p -- "$nd/ssh" && chmod 700 "$nd/ssh" || return 1
	cp -- "$CLUSTER_DIR/ssh/host_ed25519_key" \
		"$CLUSTER_DIR/ssh/host_ed25519_key.pub" "$nd/ssh/" &&
		cp -- "$CLUSTER_DIR/ssh/id_ed25519.pub" \
			"$nd/ssh/authorized_keys" || return 1
	HARNESS_ADDR=$(cluster_addr "$node") harness_write_sshd_config "$nd" 22
}
