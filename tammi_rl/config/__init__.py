"""Run configuration: typed dataclasses (one per section) loaded from YAML and validated.

`tammi_rl.config.schema` declares every key with its documentation and limits,
`tammi_rl.config.loading` reads YAML files and ``key=value`` overrides, and
`tammi_rl.config.fields` holds the declaration helper and the generic checker.
"""

from tammi_rl.config.fields import ConfigError
from tammi_rl.config.loading import (
    ConfigWarning,
    apply_overrides,
    config_from_dict,
    load_config,
    save_config,
)
from tammi_rl.config.schema import (
    SEARCH_ALGORITHMS,
    CheckpointConfig,
    Config,
    DistributedConfig,
    EvalConfig,
    GatingConfig,
    MCTSConfig,
    NetworkConfig,
    ReplayConfig,
    SelfPlayConfig,
    TrainConfig,
    describe_fields,
    validate,
)

__all__ = [
    "SEARCH_ALGORITHMS",
    "CheckpointConfig",
    "Config",
    "ConfigError",
    "ConfigWarning",
    "DistributedConfig",
    "EvalConfig",
    "GatingConfig",
    "MCTSConfig",
    "NetworkConfig",
    "ReplayConfig",
    "SelfPlayConfig",
    "TrainConfig",
    "apply_overrides",
    "config_from_dict",
    "describe_fields",
    "load_config",
    "save_config",
    "validate",
]
