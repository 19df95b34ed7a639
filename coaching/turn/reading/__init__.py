"""Reading a learner message: what it does (the act) and the values it carries, each pointing at
the learner's words. Pure: no database."""
