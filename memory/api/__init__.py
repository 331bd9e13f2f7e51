"""karani's REST API: thin DRF views over ``memory.services``."""
