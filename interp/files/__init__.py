"""The file formats a user keeps: the activation cache (:mod:`interp.files.activations`) and the interventions file (:mod:`interp.files.interventions`)."""
