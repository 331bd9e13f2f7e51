"""qualify's REST API: working context, decisions, outcomes and the funnel for outside
pipelines; thin DRF views over ``qualify.selectors``, ``qualify.decisions`` and
``qualify.outcomes``, in memory.api's error shape and rights."""
