// The umbrella header: everything a Sluice program needs.
#pragma once

#include "sluice/api/connected_streams.h"
#include "sluice/api/datastream.h"
#include "sluice/api/environment.h"
#include "sluice/api/functions.h"
#include "sluice/api/job_client.h"
#include "sluice/config/configuration.h"
#include "sluice/config/options.h"
#include "sluice/core/serializer.h"
#include "sluice/core/status.h"
#include "sluice/metrics/metric_registry.h"
#include "sluice/sink/builtin_sinks.h"
#include "sluice/sink/sink.h"
#include "sluice/source/generator_source.h"
#include "sluice/source/source.h"
#include "sluice/state/keyed_state_backend.h"
#include "sluice/windowing/windowed_stream.h"
