"""City attributes (RAVEL's city entity, MIB's localization track): a committed table of cities, prompts asking each
one's country or continent, a causal model with ``Country`` and ``Continent``, read by a causal LM through each
answer's first token."""

from interp.tasks.cities.data import TABLE, TEMPLATES, City, CityExample, city_examples, read_cities
from interp.tasks.cities.task import NAME, VARIABLES, city_causal_model, city_task, first_token_words

__all__ = ["NAME", "TABLE", "TEMPLATES", "VARIABLES", "City", "CityExample", "city_causal_model", "city_examples", "city_task",
           "first_token_words", "read_cities"]
