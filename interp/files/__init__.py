"""The file formats a user keeps: the activation cache (:mod:`.activations`) and the interventions file (:mod:`.interventions`)."""
