/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_names.c -- the wire's numbers as words: status codes as errno
 * values and text (pmdk-interop 2.7), provider ids as libfabric names, and the
 * persist methods
 */
#include <errno.h>

#include "names.h"
#include "proto.h"

/* the wire status table, pmdk-interop 2.7 */
static const struct {
	int err;
	const char *str;
} status_tab[PROTO_ERR_MAX] = {
	[PROTO_SUCCESS] = {0, "Success"},
	[PROTO_ERR_BADPROTO] = {EPROTONOSUPPORT,
		"Protocol version number mismatch"},
	[PROTO_ERR_BADNAME] = {EINVAL, "Invalid pool descriptor"},
	[PROTO_ERR_BADSIZE] = {EFBIG, "Invalid pool size"},
	[PROTO_ERR_BADNLANES] = {EINVAL, "Invalid number of lanes"},
	[PROTO_ERR_BADPROVIDER] = {EINVAL, "Invalid provider"},
	[PROTO_ERR_FATAL] = {EREMOTEIO, "Fatal error"},
	[PROTO_ERR_FATAL_CONN] = {ECONNABORTED,
		"Fatal in-band connection error"},
	[PROTO_ERR_BUSY] = {EBUSY, "Pool already in use"},
	[PROTO_ERR_EXISTS] = {EEXIST, "Pool already exists"},
	[PROTO_ERR_PROVNOSUP] = {EMEDIUMTYPE, "Provider not supported"},
	[PROTO_ERR_NOEXIST] = {ENOENT,
		"Pool set or its part doesn't exist or it is unavailable"},
	[PROTO_ERR_NOACCESS] = {EACCES, "Pool set permission denied"},
	[PROTO_ERR_POOL_CFG] = {EINVAL, "Invalid pool set configuration"},
};

/* proto_status_errno -- wire status to client errno (pmdk-interop 2.7) */
int
proto_status_errno(uint32_t status)
{
	if (status >= PROTO_ERR_MAX)
		return EPROTO;
	return status_tab[status].err;
}

/* proto_status_str -- human text of a wire status */
const char *
proto_status_str(uint32_t status)
{
	if (status >= PROTO_ERR_MAX)
		return "invalid status received";
	return status_tab[status].str;
}

static const char *const provider_names[PROTO_PROV_MAX] = {
	[PROTO_PROV_UNKNOWN] = "unknown",
	[PROTO_PROV_VERBS] = "verbs",
	[PROTO_PROV_SOCKETS] = "sockets",
	[PROTO_PROV_TCP] = "tcp",
};

/* proto_provider_name -- libfabric name of a wire provider id */
const char *
proto_provider_name(uint32_t provider)
{
	if (provider >= PROTO_PROV_MAX)
		return provider_names[PROTO_PROV_UNKNOWN];
	return provider_names[provider];
}

/* proto_provider_parse -- wire provider id of a libfabric name */
enum proto_provider
proto_provider_parse(const char *name)
{
	int p = names_find(provider_names, PROTO_PROV_VERBS, PROTO_PROV_MAX,
		name);
	return p < 0 ? PROTO_PROV_UNKNOWN : (enum proto_provider)p;
}

/* proto_pm_name -- "GPSPM" / "APM" */
const char *
proto_pm_name(uint32_t pm)
{
	if (pm == PROTO_PM_GPSPM)
		return "GPSPM";
	return pm == PROTO_PM_APM ? "APM" : "unknown";
}
