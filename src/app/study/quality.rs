//! A study's `[quality]` gate in the runner: after a session's runs the configuration
//! answers the eval set — over HTTP on a launched server, or drawn at its staged accuracy
//! on the simulator engine ([`crate::study::QualitySpec::sim_accuracy_of`]) — and the
//! answers are journaled beside its runs.

use super::Runner;
use crate::study::plan::Session;
use crate::study::StudyError;

impl Runner {
    /// Has `session`'s configuration answer the eval set unless it has; `target` is the
    /// launched server's URL and key (`None`: the simulator engine).
    pub(super) fn measure_quality(
        &mut self,
        session: &Session,
        target: Option<(&str, Option<&str>)>,
        log: &mut dyn FnMut(&str),
    ) -> Result<(), StudyError> {
        let Some(spec) = self.study.quality.clone() else {
            return Ok(());
        };
        let key = session.config.key();
        if self.outcomes.quality.contains_key(&key) {
            return Ok(());
        }
        let items = crate::quality::eval::load(&spec.eval)
            .map_err(|e| StudyError::Usage(format!("quality.eval: {e}")))?;
        let answers: Vec<bool> = match target {
            None => {
                // The steps that built this configuration, back to the baseline.
                let a = self.analysis();
                let mut chain = Vec::new();
                let mut at = a.steps.iter().find(|s| s.config == session.config);
                while let Some(s) = at.filter(|_| chain.len() <= a.steps.len()) {
                    chain.push(s.name.as_str());
                    // Built on its `on` step; `best` is what it was compared with.
                    let on = self.study.ladder.steps.iter().find(|x| x.name == s.name);
                    let base = match on.and_then(|x| x.on.as_deref()) {
                        None | Some("best") => s.reference.as_str(),
                        Some(name) => name,
                    };
                    at = a.steps.iter().find(|x| x.name == base);
                }
                let accuracy = spec.sim_accuracy_of(&chain);
                let seed =
                    u64::from_str_radix(key.rsplit('-').next().unwrap_or("0"), 16).unwrap_or(0);
                items
                    .iter()
                    .map(|i| crate::quality::answers::draw(&i.prompt, accuracy, seed))
                    .collect()
            }
            Some((url, bearer)) => {
                let mut config = crate::http::HttpConfig::new(url.to_string());
                config.model = Some(session.config.model.clone());
                config.api_key = bearer.map(str::to_string);
                let engine = crate::http::HttpEngine::new(config)
                    .map_err(|e| StudyError::Usage(format!("quality: {url}: {e}")))?;
                let max_tokens = spec.max_tokens.unwrap_or(32);
                crate::app::quality::ask_all(&engine, &items, max_tokens, 16)
                    .into_iter()
                    .map(|o| o.right)
                    .collect()
            }
        };
        let right = answers.iter().filter(|r| **r).count();
        log(&format!(
            "  quality: {right} of {} items right ({})",
            answers.len(),
            spec.eval
        ));
        self.outcomes.quality.insert(key.clone(), answers.clone());
        self.journal.quality.insert(key, answers);
        self.save()
    }
}
