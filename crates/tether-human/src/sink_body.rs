//! The one document every notice sink sends: what happened (a notice, a question, a reminder,
//! an answer given elsewhere), as tether's JSON body or as plain text.
//!
//! The webhook's `json` format POSTs it as is, the command sink writes it to its program's
//! stdin, and the README documents it; Slack, Discord, email and ntfy show its plain text. One
//! shape for all of them, so a script written against one works against the others.

use serde::Serialize;
use tether_store::Question;

use crate::broker::Answer;
use crate::notices::Notice;
use crate::visible::one_line;

/// What a sink is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BodyKind {
    /// A notice about a run (`notice` says which).
    Notice,
    /// A question waiting for an answer.
    Question,
    /// A question still waiting after `human.remind_after`.
    Reminder,
    /// A question answered (elsewhere, or on this sink).
    Answered,
}

/// The JSON body of a sink's message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SinkBody {
    /// What happened.
    pub kind: BodyKind,
    /// The notice's kind (`done`, `paused`, `failed`, `signed_off`, `rejected`,
    /// `schedule_paused`, `overdue`), for notices.
    pub notice: Option<&'static str>,
    /// The run it is about, when there is one.
    pub run_id: Option<String>,
    /// One or two sentences for a person.
    pub text: String,
    /// The question, for questions, reminders and answers.
    pub question_id: Option<String>,
    /// The question's options (empty for a notice or a free-text question).
    pub options: Vec<String>,
    /// The command that continues the run, for a notice that has one.
    pub resume: Option<String>,
    /// The command that answers the question from any shell.
    pub answer_command: Option<String>,
}

impl SinkBody {
    /// A notice about a run.
    pub fn notice(notice: &Notice) -> Self {
        SinkBody {
            kind: BodyKind::Notice,
            notice: Some(notice.kind.as_str()),
            run_id: notice.run_id.as_ref().map(ToString::to_string),
            text: notice.text.clone(),
            question_id: None,
            options: Vec::new(),
            resume: notice.resume.clone(),
            answer_command: None,
        }
    }

    /// A question (or a reminder of one).
    pub fn question(question: &Question, kind: BodyKind) -> Self {
        let mut text = one_line(&question.question).into_owned();
        if kind == BodyKind::Reminder {
            text = format!("Still waiting for an answer: {text}");
        }
        SinkBody {
            kind,
            notice: None,
            run_id: question.run_id.as_ref().map(ToString::to_string),
            text,
            question_id: Some(question.id.to_string()),
            options: question.options.clone(),
            resume: None,
            answer_command: Some(format!("tether answer {} \"<answer>\"", question.id)),
        }
    }

    /// A question answered by `answer`.
    pub fn answered(question: &Question, answer: &Answer) -> Self {
        let mut body = Self::question(question, BodyKind::Answered);
        body.text = format!(
            "Answered on {} by {}: {}",
            answer.channel,
            one_line(&answer.responder),
            one_line(&answer.text)
        );
        body.answer_command = None;
        body
    }

    /// A short subject line (an email's subject, a push's title).
    pub fn title(&self) -> String {
        let run = self
            .run_id
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        match self.kind {
            BodyKind::Notice => match self.notice {
                Some("done") => format!("tether: run done{run}"),
                Some("paused") => format!("tether: run paused{run}"),
                Some("failed") => format!("tether: run failed{run}"),
                Some("signed_off") => format!("tether: goal signed off{run}"),
                Some("rejected") => format!("tether: sign-off rejected{run}"),
                _ => format!("tether: notice{run}"),
            },
            BodyKind::Question => format!("tether: a question{run}"),
            BodyKind::Reminder => format!("tether: still waiting for an answer{run}"),
            BodyKind::Answered => format!("tether: question answered{run}"),
        }
    }

    /// The body as plain text: the text, the options numbered, and how to answer or go on.
    pub fn plain(&self) -> String {
        let mut out = self.text.clone();
        if !self.options.is_empty() && self.kind != BodyKind::Answered {
            for (i, option) in self.options.iter().enumerate() {
                out.push_str(&format!("\n{}. {}", i + 1, one_line(option)));
            }
        }
        if let Some(command) = &self.answer_command {
            out.push_str(&format!("\nTo answer: {command}"));
        }
        if let Some(command) = &self.resume {
            out.push_str(&format!("\nTo continue: {command}"));
        }
        out
    }

    /// The JSON document (tether's own webhook format, the command sink's stdin).
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}
